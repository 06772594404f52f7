// Command bench-gofloor is the benchmark's Go floor (scripts/bench, docs/benchmarks.md): a provider written with
// HashiCorp's terraform-plugin-go that serves terraform-provider-sveltos' schemas and does nothing else.
//
// The schemas come from schema.json, embedded at build time: the provider schemas `tofu providers schema -json`
// printed for terraform-provider-sveltos (scripts/bench writes it next to a copy of this file and builds that
// copy), converted back into tfprotov6 schema objects. scripts/bench then checks that `tofu providers schema -json`
// prints the same bytes for this binary as for the provider. (`go test` needs a schema.json too: scripts/bench runs
// it in its copy before building.)
//
// What it answers: UpgradeResourceState with the stored JSON state passed through as it is, ReadResource with
// the current state and PlanResourceChange with the prior state (what Terraform proposed for a create or a
// destroy), without decoding them: the least a terraform-plugin-go provider can do for a refresh and a plan.
// With BENCH_GOFLOOR_DECODE=1 in its environment it decodes each of those states into tftypes values and encodes
// them again, as any provider that looks at its state does (terraform-plugin-framework, SDKv2). Validation and
// configuration succeed without looking; every other RPC (apply, import, data sources, ephemeral resources,
// functions) answers with an error diagnostic.
package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// providerAddress is the provider's source address (the dev_overrides entry of the benchmark names it).
const providerAddress = "registry.terraform.io/clusterinventory/sveltos"

//go:embed schema.json
var schemaJSON []byte

func main() {
	debug := flag.Bool("debug", false, "start in debug mode (prints TF_REATTACH_PROVIDERS)")
	flag.Parse()
	server, err := newFloor(schemaJSON, os.Getenv("BENCH_GOFLOOR_DECODE") == "1")
	if err != nil {
		log.Fatalf("bench-gofloor: %v", err)
	}
	var opts []tf6server.ServeOpt
	if *debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	factory := func() tfprotov6.ProviderServer { return server }
	if err := tf6server.Serve(providerAddress, factory, opts...); err != nil {
		log.Fatalf("bench-gofloor: %v", err)
	}
}

// ---------------------------------------------------------------------------------------------------------------
// The schema, from the JSON the CLI prints (`tofu providers schema -json`)
// ---------------------------------------------------------------------------------------------------------------

type jsonProviders struct {
	FormatVersion   string                   `json:"format_version"`
	ProviderSchemas map[string]*jsonProvider `json:"provider_schemas"`
}

type jsonProvider struct {
	Provider                 *jsonSchema            `json:"provider"`
	ResourceSchemas          map[string]*jsonSchema `json:"resource_schemas"`
	DataSourceSchemas        map[string]*jsonSchema `json:"data_source_schemas"`
	EphemeralResourceSchemas map[string]*jsonSchema `json:"ephemeral_resource_schemas"`
}

type jsonSchema struct {
	Version int64      `json:"version"`
	Block   *jsonBlock `json:"block"`
}

type jsonBlock struct {
	Attributes      map[string]*jsonAttribute `json:"attributes"`
	BlockTypes      map[string]*jsonBlockType `json:"block_types"`
	Description     string                    `json:"description"`
	DescriptionKind string                    `json:"description_kind"`
	Deprecated      bool                      `json:"deprecated"`
	DeprecationMsg  string                    `json:"deprecation_message"`
}

type jsonAttribute struct {
	Type            json.RawMessage `json:"type"`
	NestedType      *jsonNestedType `json:"nested_type"`
	Description     string          `json:"description"`
	DescriptionKind string          `json:"description_kind"`
	Deprecated      bool            `json:"deprecated"`
	DeprecationMsg  string          `json:"deprecation_message"`
	Required        bool            `json:"required"`
	Optional        bool            `json:"optional"`
	Computed        bool            `json:"computed"`
	Sensitive       bool            `json:"sensitive"`
	WriteOnly       bool            `json:"write_only"`
}

type jsonNestedType struct {
	Attributes  map[string]*jsonAttribute `json:"attributes"`
	NestingMode string                    `json:"nesting_mode"`
}

type jsonBlockType struct {
	NestingMode string     `json:"nesting_mode"`
	Block       *jsonBlock `json:"block"`
	MinItems    int64      `json:"min_items"`
	MaxItems    int64      `json:"max_items"`
}

// parseSchemas reads the one provider of the CLI's JSON. Unknown fields are refused: a schema feature this
// conversion does not carry over must fail the build's check, not be dropped.
func parseSchemas(raw []byte) (*tfprotov6.GetProviderSchemaResponse, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var doc jsonProviders
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("schema.json: %w", err)
	}
	var found *jsonProvider
	for addr, p := range doc.ProviderSchemas {
		if strings.HasSuffix(addr, "/clusterinventory/sveltos") {
			found = p
		}
	}
	if found == nil || found.Provider == nil {
		return nil, fmt.Errorf("schema.json holds no clusterinventory/sveltos provider")
	}
	resp := &tfprotov6.GetProviderSchemaResponse{
		ServerCapabilities:       &tfprotov6.ServerCapabilities{GetProviderSchemaOptional: true, PlanDestroy: true},
		ResourceSchemas:          map[string]*tfprotov6.Schema{},
		DataSourceSchemas:        map[string]*tfprotov6.Schema{},
		EphemeralResourceSchemas: map[string]*tfprotov6.Schema{},
		Functions:                map[string]*tfprotov6.Function{},
	}
	var err error
	if resp.Provider, err = convertSchema(found.Provider); err != nil {
		return nil, fmt.Errorf("provider: %w", err)
	}
	for _, group := range []struct {
		from map[string]*jsonSchema
		to   map[string]*tfprotov6.Schema
	}{
		{found.ResourceSchemas, resp.ResourceSchemas},
		{found.DataSourceSchemas, resp.DataSourceSchemas},
		{found.EphemeralResourceSchemas, resp.EphemeralResourceSchemas},
	} {
		for name, s := range group.from {
			if group.to[name], err = convertSchema(s); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return resp, nil
}

func convertSchema(s *jsonSchema) (*tfprotov6.Schema, error) {
	if s.Block == nil {
		return nil, fmt.Errorf("no block")
	}
	block, err := convertBlock(s.Block)
	if err != nil {
		return nil, err
	}
	block.Version = s.Version
	return &tfprotov6.Schema{Version: s.Version, Block: block}, nil
}

// sortedKeys returns the keys of m in order (the CLI's JSON is a map; the protocol's lists are given sorted).
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func convertBlock(b *jsonBlock) (*tfprotov6.SchemaBlock, error) {
	out := &tfprotov6.SchemaBlock{
		Description:        b.Description,
		DescriptionKind:    stringKind(b.DescriptionKind),
		Deprecated:         b.Deprecated,
		DeprecationMessage: b.DeprecationMsg,
	}
	attrs, err := convertAttributes(b.Attributes)
	if err != nil {
		return nil, err
	}
	out.Attributes = attrs
	for _, name := range sortedKeys(b.BlockTypes) {
		bt := b.BlockTypes[name]
		nested, err := convertBlock(bt.Block)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		mode, ok := blockNesting[bt.NestingMode]
		if !ok {
			return nil, fmt.Errorf("%s: nesting mode %q", name, bt.NestingMode)
		}
		out.BlockTypes = append(out.BlockTypes, &tfprotov6.SchemaNestedBlock{
			TypeName: name, Block: nested, Nesting: mode, MinItems: bt.MinItems, MaxItems: bt.MaxItems,
		})
	}
	return out, nil
}

func convertAttributes(m map[string]*jsonAttribute) ([]*tfprotov6.SchemaAttribute, error) {
	var out []*tfprotov6.SchemaAttribute
	for _, name := range sortedKeys(m) {
		a := m[name]
		attr := &tfprotov6.SchemaAttribute{
			Name:               name,
			Description:        a.Description,
			DescriptionKind:    stringKind(a.DescriptionKind),
			Deprecated:         a.Deprecated,
			DeprecationMessage: a.DeprecationMsg,
			Required:           a.Required,
			Optional:           a.Optional,
			Computed:           a.Computed,
			Sensitive:          a.Sensitive,
			WriteOnly:          a.WriteOnly,
		}
		switch {
		case a.NestedType != nil:
			nested, err := convertAttributes(a.NestedType.Attributes)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			mode, ok := objectNesting[a.NestedType.NestingMode]
			if !ok {
				return nil, fmt.Errorf("%s: nesting mode %q", name, a.NestedType.NestingMode)
			}
			attr.NestedType = &tfprotov6.SchemaObject{Attributes: nested, Nesting: mode}
		case len(a.Type) > 0:
			typ, err := tftypes.ParseJSONType(a.Type) //nolint:staticcheck // the CLI's JSON type syntax
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			attr.Type = typ
		default:
			return nil, fmt.Errorf("%s: neither a type nor a nested type", name)
		}
		out = append(out, attr)
	}
	return out, nil
}

var blockNesting = map[string]tfprotov6.SchemaNestedBlockNestingMode{
	"single": tfprotov6.SchemaNestedBlockNestingModeSingle,
	"list":   tfprotov6.SchemaNestedBlockNestingModeList,
	"set":    tfprotov6.SchemaNestedBlockNestingModeSet,
	"map":    tfprotov6.SchemaNestedBlockNestingModeMap,
	"group":  tfprotov6.SchemaNestedBlockNestingModeGroup,
}

var objectNesting = map[string]tfprotov6.SchemaObjectNestingMode{
	"single": tfprotov6.SchemaObjectNestingModeSingle,
	"list":   tfprotov6.SchemaObjectNestingModeList,
	"set":    tfprotov6.SchemaObjectNestingModeSet,
	"map":    tfprotov6.SchemaObjectNestingModeMap,
}

func stringKind(kind string) tfprotov6.StringKind {
	if kind == "markdown" {
		return tfprotov6.StringKindMarkdown
	}
	return tfprotov6.StringKindPlain
}

// ---------------------------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------------------------

type floor struct {
	schema *tfprotov6.GetProviderSchemaResponse
	// The state type of each resource (for BENCH_GOFLOOR_DECODE).
	types  map[string]tftypes.Type
	decode bool
}

var _ tfprotov6.ProviderServer = (*floor)(nil)

func newFloor(raw []byte, decode bool) (*floor, error) {
	schema, err := parseSchemas(raw)
	if err != nil {
		return nil, err
	}
	types := map[string]tftypes.Type{}
	for name, s := range schema.ResourceSchemas {
		types[name] = s.ValueType()
	}
	return &floor{schema: schema, types: types, decode: decode}, nil
}

func refuse(what string) []*tfprotov6.Diagnostic {
	return []*tfprotov6.Diagnostic{{
		Severity: tfprotov6.DiagnosticSeverityError,
		Summary:  "bench-gofloor does not " + what,
		Detail:   "The benchmark's Go floor only refreshes and plans (echoing the prior state).",
	}}
}

// echo is `v`, or, with decode, `v` decoded as the resource's state and encoded again.
func (f *floor) echo(typeName string, v *tfprotov6.DynamicValue) (*tfprotov6.DynamicValue, []*tfprotov6.Diagnostic) {
	if !f.decode || v == nil {
		return v, nil
	}
	typ, ok := f.types[typeName]
	if !ok {
		return nil, refuse("know resource type " + typeName)
	}
	val, err := v.Unmarshal(typ)
	if err == nil {
		var out tfprotov6.DynamicValue
		if out, err = tfprotov6.NewDynamicValue(typ, val); err == nil {
			return &out, nil
		}
	}
	return nil, []*tfprotov6.Diagnostic{{Severity: tfprotov6.DiagnosticSeverityError, Summary: err.Error()}}
}

func (f *floor) GetMetadata(context.Context, *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	resp := &tfprotov6.GetMetadataResponse{ServerCapabilities: f.schema.ServerCapabilities}
	for _, name := range sortedKeys(f.schema.ResourceSchemas) {
		resp.Resources = append(resp.Resources, tfprotov6.ResourceMetadata{TypeName: name})
	}
	for _, name := range sortedKeys(f.schema.DataSourceSchemas) {
		resp.DataSources = append(resp.DataSources, tfprotov6.DataSourceMetadata{TypeName: name})
	}
	for _, name := range sortedKeys(f.schema.EphemeralResourceSchemas) {
		resp.EphemeralResources = append(resp.EphemeralResources, tfprotov6.EphemeralResourceMetadata{TypeName: name})
	}
	return resp, nil
}

func (f *floor) GetProviderSchema(context.Context, *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	return f.schema, nil
}

func (f *floor) GetResourceIdentitySchemas(context.Context, *tfprotov6.GetResourceIdentitySchemasRequest) (*tfprotov6.GetResourceIdentitySchemasResponse, error) {
	return &tfprotov6.GetResourceIdentitySchemasResponse{}, nil
}

func (f *floor) ValidateProviderConfig(context.Context, *tfprotov6.ValidateProviderConfigRequest) (*tfprotov6.ValidateProviderConfigResponse, error) {
	return &tfprotov6.ValidateProviderConfigResponse{}, nil
}

func (f *floor) ConfigureProvider(context.Context, *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	return &tfprotov6.ConfigureProviderResponse{}, nil
}

func (f *floor) StopProvider(context.Context, *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	return &tfprotov6.StopProviderResponse{}, nil
}

func (f *floor) ValidateResourceConfig(context.Context, *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return &tfprotov6.ValidateResourceConfigResponse{}, nil
}

func (f *floor) UpgradeResourceState(_ context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	if req.RawState == nil || req.RawState.JSON == nil {
		return &tfprotov6.UpgradeResourceStateResponse{Diagnostics: refuse("upgrade a flatmap state")}, nil
	}
	state := &tfprotov6.DynamicValue{JSON: req.RawState.JSON}
	state, diags := f.echo(req.TypeName, state)
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: state, Diagnostics: diags}, nil
}

func (f *floor) ReadResource(_ context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	state, diags := f.echo(req.TypeName, req.CurrentState)
	return &tfprotov6.ReadResourceResponse{NewState: state, Private: req.Private, Diagnostics: diags}, nil
}

func (f *floor) PlanResourceChange(_ context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	planned := req.PriorState
	priorNull, err1 := isNull(req.PriorState)
	proposedNull, err2 := isNull(req.ProposedNewState)
	if err := firstError(err1, err2); err != nil {
		return &tfprotov6.PlanResourceChangeResponse{Diagnostics: []*tfprotov6.Diagnostic{{
			Severity: tfprotov6.DiagnosticSeverityError, Summary: err.Error()}}}, nil
	}
	if priorNull || proposedNull {
		planned = req.ProposedNewState
	}
	planned, diags := f.echo(req.TypeName, planned)
	return &tfprotov6.PlanResourceChangeResponse{PlannedState: planned, PlannedPrivate: req.PriorPrivate, Diagnostics: diags}, nil
}

func isNull(v *tfprotov6.DynamicValue) (bool, error) {
	if v == nil {
		return true, nil
	}
	return v.IsNull()
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (f *floor) ApplyResourceChange(context.Context, *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return &tfprotov6.ApplyResourceChangeResponse{Diagnostics: refuse("apply")}, nil
}

func (f *floor) ImportResourceState(context.Context, *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return &tfprotov6.ImportResourceStateResponse{Diagnostics: refuse("import")}, nil
}

func (f *floor) MoveResourceState(context.Context, *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	return &tfprotov6.MoveResourceStateResponse{Diagnostics: refuse("move resource states")}, nil
}

func (f *floor) UpgradeResourceIdentity(context.Context, *tfprotov6.UpgradeResourceIdentityRequest) (*tfprotov6.UpgradeResourceIdentityResponse, error) {
	return &tfprotov6.UpgradeResourceIdentityResponse{Diagnostics: refuse("upgrade resource identities")}, nil
}

func (f *floor) GenerateResourceConfig(context.Context, *tfprotov6.GenerateResourceConfigRequest) (*tfprotov6.GenerateResourceConfigResponse, error) {
	return &tfprotov6.GenerateResourceConfigResponse{Diagnostics: refuse("generate configuration")}, nil
}

func (f *floor) ValidateDataResourceConfig(context.Context, *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return &tfprotov6.ValidateDataResourceConfigResponse{}, nil
}

func (f *floor) ReadDataSource(context.Context, *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return &tfprotov6.ReadDataSourceResponse{Diagnostics: refuse("read data sources")}, nil
}

func (f *floor) ValidateEphemeralResourceConfig(context.Context, *tfprotov6.ValidateEphemeralResourceConfigRequest) (*tfprotov6.ValidateEphemeralResourceConfigResponse, error) {
	return &tfprotov6.ValidateEphemeralResourceConfigResponse{}, nil
}

func (f *floor) OpenEphemeralResource(context.Context, *tfprotov6.OpenEphemeralResourceRequest) (*tfprotov6.OpenEphemeralResourceResponse, error) {
	return &tfprotov6.OpenEphemeralResourceResponse{Diagnostics: refuse("open ephemeral resources")}, nil
}

func (f *floor) RenewEphemeralResource(context.Context, *tfprotov6.RenewEphemeralResourceRequest) (*tfprotov6.RenewEphemeralResourceResponse, error) {
	return &tfprotov6.RenewEphemeralResourceResponse{Diagnostics: refuse("renew ephemeral resources")}, nil
}

func (f *floor) CloseEphemeralResource(context.Context, *tfprotov6.CloseEphemeralResourceRequest) (*tfprotov6.CloseEphemeralResourceResponse, error) {
	return &tfprotov6.CloseEphemeralResourceResponse{}, nil
}

func (f *floor) GetFunctions(context.Context, *tfprotov6.GetFunctionsRequest) (*tfprotov6.GetFunctionsResponse, error) {
	return &tfprotov6.GetFunctionsResponse{Functions: map[string]*tfprotov6.Function{}}, nil
}

func (f *floor) CallFunction(context.Context, *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	return &tfprotov6.CallFunctionResponse{Error: &tfprotov6.FunctionError{Text: "bench-gofloor has no functions"}}, nil
}

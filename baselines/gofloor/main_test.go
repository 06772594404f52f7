package main

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A provider as `tofu providers schema -json` prints it: nested attributes, nested blocks, deprecation, kinds.
const sample = `{"format_version":"1.0","provider_schemas":{"registry.opentofu.org/clusterinventory/sveltos":{
 "provider":{"version":0,"block":{"attributes":{"host":{"type":"string","description":"h","description_kind":"markdown","optional":true}},"description_kind":"plain"}},
 "resource_schemas":{"r":{"version":2,"block":{
   "attributes":{
     "id":{"type":"string","computed":true},
     "clusters":{"nested_type":{"attributes":{"uid":{"type":"string","computed":true,"sensitive":true}},"nesting_mode":"map"},"computed":true},
     "old":{"type":["list","number"],"optional":true,"deprecated":true,"deprecation_message":"gone"}},
   "block_types":{"timeouts":{"nesting_mode":"single","block":{"attributes":{"create":{"type":"string","optional":true}}},"max_items":1}}}}},
 "data_source_schemas":{},
 "ephemeral_resource_schemas":{"e":{"version":0,"block":{"attributes":{"k":{"type":"string","computed":true,"sensitive":true}}}}}}}}`

func TestSchemasComeBackAsTheCLIPrintedThem(t *testing.T) {
	f, err := newFloor([]byte(sample), false)
	if err != nil {
		t.Fatal(err)
	}
	r := f.schema.ResourceSchemas["r"]
	if r.Version != 2 || len(r.Block.Attributes) != 3 || r.Block.Attributes[0].Name != "clusters" {
		t.Fatalf("resource schema: %+v", r.Block)
	}
	clusters := r.Block.Attributes[0]
	if clusters.NestedType.Nesting != tfprotov6.SchemaObjectNestingModeMap || !clusters.NestedType.Attributes[0].Sensitive {
		t.Fatalf("nested attribute: %+v", clusters.NestedType)
	}
	old := r.Block.Attributes[2]
	if !old.Deprecated || old.DeprecationMessage != "gone" || !old.Type.Equal(tftypes.List{ElementType: tftypes.Number}) {
		t.Fatalf("deprecated attribute: %+v", old)
	}
	tb := r.Block.BlockTypes[0]
	if tb.TypeName != "timeouts" || tb.Nesting != tfprotov6.SchemaNestedBlockNestingModeSingle || tb.MaxItems != 1 {
		t.Fatalf("block type: %+v", tb)
	}
	if f.schema.Provider.Block.Attributes[0].DescriptionKind != tfprotov6.StringKindMarkdown {
		t.Fatalf("description kind: %+v", f.schema.Provider.Block.Attributes[0])
	}
	if _, ok := f.schema.EphemeralResourceSchemas["e"]; !ok {
		t.Fatal("ephemeral resource schemas are served")
	}
}

func TestAFieldTheConversionDoesNotKnowIsRefused(t *testing.T) {
	withNew := strings.Replace(sample, `"computed":true,"sensitive":true}},"nesting_mode"`, `"computed":true,"sensitive":true,"new_thing":1}},"nesting_mode"`, 1)
	if _, err := newFloor([]byte(withNew), false); err == nil || !strings.Contains(err.Error(), "new_thing") {
		t.Fatalf("want the unknown field refused, got %v", err)
	}
}

func TestPlanEchoesThePriorStateAndProposesCreatesAndDestroys(t *testing.T) {
	f, err := newFloor([]byte(sample), false)
	if err != nil {
		t.Fatal(err)
	}
	typ := f.types["r"]
	value := func(id string) *tfprotov6.DynamicValue {
		attrs := map[string]tftypes.Value{}
		for name, at := range typ.(tftypes.Object).AttributeTypes {
			attrs[name] = tftypes.NewValue(at, nil)
		}
		attrs["id"] = tftypes.NewValue(tftypes.String, id)
		dv, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, attrs))
		if err != nil {
			t.Fatal(err)
		}
		return &dv
	}
	null, _ := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
	plan := func(prior, proposed *tfprotov6.DynamicValue) *tfprotov6.DynamicValue {
		resp, _ := f.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
			TypeName: "r", PriorState: prior, ProposedNewState: proposed})
		if len(resp.Diagnostics) > 0 {
			t.Fatal(resp.Diagnostics[0].Summary)
		}
		return resp.PlannedState
	}
	prior, proposed := value("prior"), value("proposed")
	if got := plan(prior, proposed); got != prior {
		t.Fatal("a plan of an existing resource answers with its prior state")
	}
	if got := plan(&null, proposed); got != proposed {
		t.Fatal("a create answers with what was proposed")
	}
	if got := plan(prior, &null); got != &null {
		t.Fatal("a destroy answers with what was proposed (null)")
	}
	// Decoding and encoding again gives the same value.
	f.decode = true
	got := plan(prior, proposed)
	v, err := got.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := prior.Unmarshal(typ)
	if !v.Equal(want) {
		t.Fatalf("decoded echo: %v, want %v", v, want)
	}
}

func TestUpgradePassesTheStoredStateThrough(t *testing.T) {
	f, err := newFloor([]byte(sample), false)
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(`{"id":"x","clusters":null,"old":null,"timeouts":null}`)
	resp, _ := f.UpgradeResourceState(context.Background(), &tfprotov6.UpgradeResourceStateRequest{
		TypeName: "r", RawState: &tfprotov6.RawState{JSON: raw}})
	if string(resp.UpgradedState.JSON) != string(raw) {
		t.Fatalf("upgraded state: %s", resp.UpgradedState.JSON)
	}
}

// Command gocty answers with go-cty's msgpack codec (github.com/zclconf/go-cty/cty/msgpack, the code
// Terraform and OpenTofu read and write a provider's DynamicValues with): the judge of the provider's
// codec, src/tfplugin/value/msgpack (tests/plugin/cty_oracle.rs).
//
//	gocty < cases.json
//
// reads a JSON array of cases {"type": <cty type JSON>, "msgpack": "<hex>"} and prints a JSON array with
// one answer per case:
//
//	{"error": "<go-cty's message>"}                 msgpack.Unmarshal refuses the bytes
//	{"error": "...", "panicked": true}               go-cty panics on them (Terraform would crash)
//	{"reencoded": "<hex>", "wholly_known": bool,     accepted: msgpack.Marshal of the decoded value with
//	 "unknowns": [...]}                               the same type, and what go-cty sees in it
//	{"reencode_error": "...", ...}                   accepted, but Marshal refuses the decoded value
//
// "unknowns" lists each unknown value go-cty decoded (depth first, set elements in go-cty's order) with
// its refinements as go-cty reports them: {"not_null", "prefix", "lower", "lower_inclusive", "upper",
// "upper_inclusive", "min_length", "max_length"}, numbers as exact decimal text, absent when unrefined.
package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"

	"github.com/zclconf/go-cty/cty"
	ctymsgpack "github.com/zclconf/go-cty/cty/msgpack"
)

// request is one case.
type request struct {
	Type    json.RawMessage `json:"type"`
	Msgpack string          `json:"msgpack"`
}

// answer is what go-cty makes of one case.
type answer struct {
	Error         string    `json:"error,omitempty"`
	Panicked      bool      `json:"panicked,omitempty"`
	Reencoded     *string   `json:"reencoded,omitempty"`
	ReencodeError string    `json:"reencode_error,omitempty"`
	WhollyKnown   *bool     `json:"wholly_known,omitempty"`
	Unknowns      []unknown `json:"unknowns,omitempty"`
}

// unknown is the refinements of one unknown value, as go-cty's ValueRange reports them.
type unknown struct {
	NotNull        bool    `json:"not_null,omitempty"`
	Prefix         *string `json:"prefix,omitempty"`
	Lower          *string `json:"lower,omitempty"`
	LowerInclusive bool    `json:"lower_inclusive,omitempty"`
	Upper          *string `json:"upper,omitempty"`
	UpperInclusive bool    `json:"upper_inclusive,omitempty"`
	MinLength      int     `json:"min_length,omitempty"`
	MaxLength      *int    `json:"max_length,omitempty"`
}

func main() {
	if err := answerAll(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gocty:", err)
		os.Exit(1)
	}
}

func answerAll(in io.Reader, out io.Writer) error {
	var cases []request
	if err := json.NewDecoder(in).Decode(&cases); err != nil {
		return fmt.Errorf("reading the cases (a JSON array of {type, msgpack}): %w", err)
	}
	answers := make([]answer, len(cases))
	for i, c := range cases {
		var ty cty.Type
		if err := ty.UnmarshalJSON(c.Type); err != nil {
			return fmt.Errorf("case %d: type %s: %w", i, c.Type, err)
		}
		bytes, err := hex.DecodeString(c.Msgpack)
		if err != nil {
			return fmt.Errorf("case %d: msgpack: %w", i, err)
		}
		answers[i] = judge(bytes, ty)
	}
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	return enc.Encode(answers)
}

// judge decodes bytes as ty with go-cty and re-encodes the result; a panic is an answer too.
func judge(bytes []byte, ty cty.Type) (a answer) {
	defer func() {
		if p := recover(); p != nil {
			a = answer{Error: fmt.Sprint("panic: ", p), Panicked: true}
		}
	}()
	val, err := ctymsgpack.Unmarshal(bytes, ty)
	if err != nil {
		return answer{Error: err.Error()}
	}
	known := val.IsWhollyKnown()
	a.WhollyKnown = &known
	a.Unknowns = unknowns(val)
	re, err := ctymsgpack.Marshal(val, ty)
	if err != nil {
		a.ReencodeError = err.Error()
		return a
	}
	h := hex.EncodeToString(re)
	a.Reencoded = &h
	return a
}

// unknowns lists the unknown values inside val, depth first.
func unknowns(val cty.Value) []unknown {
	var found []unknown
	cty.Walk(val, func(_ cty.Path, v cty.Value) (bool, error) {
		if !v.IsKnown() {
			found = append(found, refinements(v))
		}
		return true, nil
	})
	return found
}

func refinements(v cty.Value) unknown {
	r := v.Range()
	u := unknown{NotNull: r.DefinitelyNotNull()}
	ty := r.TypeConstraint()
	switch {
	case ty == cty.String:
		if p := r.StringPrefix(); p != "" {
			u.Prefix = &p
		}
	case ty == cty.Number:
		if lo, inc := r.NumberLowerBound(); lo.IsKnown() && !lo.RawEquals(cty.NegativeInfinity) {
			s := exact(lo)
			u.Lower, u.LowerInclusive = &s, inc
		}
		if hi, inc := r.NumberUpperBound(); hi.IsKnown() && !hi.RawEquals(cty.PositiveInfinity) {
			s := exact(hi)
			u.Upper, u.UpperInclusive = &s, inc
		}
	case ty.IsCollectionType():
		u.MinLength = r.LengthLowerBound()
		if max := r.LengthUpperBound(); max != math.MaxInt {
			u.MaxLength = &max
		}
	}
	return u
}

// exact is a number as go-cty holds it, in decimal: every digit of its binary value.
func exact(n cty.Value) string {
	f := n.AsBigFloat()
	if f.IsInf() {
		return f.String()
	}
	r, _ := f.Rat(new(big.Rat))
	if r.IsInt() {
		return r.Num().String()
	}
	// A binary fraction has as many decimal digits after the point as its denominator's power of two.
	return r.FloatString(r.Denom().BitLen() - 1)
}

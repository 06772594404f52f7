// Command goduration answers with Go's own time.ParseDuration: the oracle of parse_duration
// (src/bridge/duration.rs), a port of it. Standard library only.
//
//	goduration < inputs.json
//
// reads a JSON array of strings and prints a JSON array with one object per input: {"error": "<Go's
// message>"} when Go refuses it, else {"ns": <the int64 nanoseconds Go returns>, "sum": "<the exact sum
// of its components, sign applied, in decimal>"}. The two differ only where Go's sum wraps around.
//
//	goduration -golden FILE
//
// rewrites FILE, the golden table of the unit tests of src/bridge/duration.rs: {"go": "<Go version>",
// "rows": [[input, nanoseconds or null], ...]}. Each row's second column becomes this Go's answer (null:
// refused); to add an input, add a row with any second column and run this again.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/big"
	"os"
	"runtime"
	"strings"
	"time"
)

// answer is what Go makes of one input.
type answer struct {
	Ns    *int64 `json:"ns,omitempty"`
	Sum   string `json:"sum,omitempty"`
	Error string `json:"error,omitempty"`
}

func main() {
	golden := flag.String("golden", "", "the golden table to rewrite")
	flag.Parse()
	var err error
	if *golden != "" {
		err = rewriteGolden(*golden)
	} else {
		err = answerAll(os.Stdin, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "goduration:", err)
		os.Exit(1)
	}
}

func answerAll(in io.Reader, out io.Writer) error {
	var inputs []string
	if err := json.NewDecoder(in).Decode(&inputs); err != nil {
		return fmt.Errorf("reading the inputs (a JSON array of strings): %w", err)
	}
	answers := make([]answer, len(inputs))
	for i, s := range inputs {
		d, err := time.ParseDuration(s)
		if err != nil {
			answers[i].Error = err.Error()
			continue
		}
		ns := int64(d)
		answers[i].Ns = &ns
		answers[i].Sum = exactSum(s).String()
	}
	return json.NewEncoder(out).Encode(answers)
}

// exactSum is the sum of the components of s, a duration Go accepts, in unbounded integers: each
// component is parsed alone by Go, negated so that a component of 2^63 ns (which only a negative
// duration holds) is in range.
func exactSum(s string) *big.Int {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	sum := new(big.Int)
	for s != "" && s != "0" {
		n := strings.IndexFunc(s, func(r rune) bool { return r != '.' && (r < '0' || r > '9') })
		if n < 0 {
			n = len(s)
		}
		u := strings.IndexFunc(s[n:], func(r rune) bool { return r == '.' || (r >= '0' && r <= '9') })
		if u < 0 {
			u = len(s) - n
		}
		d, err := time.ParseDuration("-" + s[:n+u])
		if err != nil {
			panic(fmt.Sprintf("component %q of an accepted duration: %v", s[:n+u], err))
		}
		sum.Sub(sum, big.NewInt(int64(d)))
		s = s[n+u:]
	}
	if neg {
		sum.Neg(sum)
	}
	return sum
}

// table is the golden file's shape.
type table struct {
	Go   string            `json:"go"`
	Rows []json.RawMessage `json:"rows"`
}

func rewriteGolden(path string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var t table
	if err := json.Unmarshal(text, &t); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "{\n  \"go\": %s,\n  \"rows\": [\n", quote(runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH))
	for i, raw := range t.Rows {
		var row []json.RawMessage
		var input string
		if err := json.Unmarshal(raw, &row); err != nil || len(row) != 2 || json.Unmarshal(row[0], &input) != nil {
			return fmt.Errorf("%s: row %d is not [input, nanoseconds or null]: %s", path, i, raw)
		}
		value := "null"
		if d, err := time.ParseDuration(input); err == nil {
			value = fmt.Sprint(int64(d))
		}
		sep := ","
		if i == len(t.Rows)-1 {
			sep = ""
		}
		fmt.Fprintf(&out, "    [%s, %s]%s\n", quote(input), value, sep)
	}
	out.WriteString("  ]\n}\n")
	return os.WriteFile(path, out.Bytes(), 0o644)
}

// quote is s as a JSON string, without the HTML escapes of encoding/json's default.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

package profiles

import (
	"encoding"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The schema check walks a profile's YAML nodes against the Go types (their yaml
// tags), so an unknown key or a bad value is one line naming the line, the key and
// the section, with a suggestion for a misspelt key. yaml.v3's KnownFields gives the
// line too, but names the Go type ("workloads.ServeSpec") where a user wrote "serve".

var (
	profileType      = reflect.TypeOf(Profile{})
	singleRunType    = reflect.TypeOf(singleRunFile{})
	runType          = reflect.TypeOf(Run{})
	yamlUnmarshalerT = reflect.TypeOf((*yaml.Unmarshaler)(nil)).Elem()
	textUnmarshalerT = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

// checkNode checks n against t; section is the dotted path of keys that led here
// ("serve.dataset"), empty at the top of a run. Errors read "LINE: message".
func checkNode(n *yaml.Node, t reflect.Type, section string) error {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if isLeaf(t) {
		v := reflect.New(t)
		if err := n.Decode(v.Interface()); err != nil {
			return fmt.Errorf("%d: bad value %s for %s (want %s)", n.Line, quoteNode(n), where(section), want(t))
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%d: %s wants keys (a mapping), not %s", n.Line, where(section), quoteNode(n))
		}
		fields := yamlFields(t)
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			ft, ok := fields[k.Value]
			if !ok {
				msg := fmt.Sprintf("%d: unknown key %q %s", k.Line, k.Value, in(section))
				if s := suggest(k.Value, fields); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", s)
				}
				return fmt.Errorf("%s", msg)
			}
			if seen[k.Value] {
				return fmt.Errorf("%d: key %q appears twice %s", k.Line, k.Value, in(section))
			}
			seen[k.Value] = true
			sub := k.Value
			if section != "" {
				sub = section + "." + k.Value
			}
			if err := checkNode(v, ft, sub); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return fmt.Errorf("%d: %s wants a list ([a, b] or one \"- item\" a line), not %s", n.Line, where(section), quoteNode(n))
		}
		for _, item := range n.Content {
			sub := section
			if t.Elem() == runType {
				sub = "" // keys inside a run read as at the top of a one-run file
			}
			if err := checkNode(item, t.Elem(), sub); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%d: %s wants keys (a mapping), not %s", n.Line, where(section), quoteNode(n))
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := checkNode(n.Content[i], t.Key(), section); err != nil {
				return err
			}
			if err := checkNode(n.Content[i+1], t.Elem(), section+"."+n.Content[i].Value); err != nil {
				return err
			}
		}
	}
	return nil
}

// isLeaf reports whether values of t are decoded whole (scalars and types that
// decode themselves).
func isLeaf(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	if pt.Implements(yamlUnmarshalerT) || pt.Implements(textUnmarshalerT) {
		return true
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Slice, reflect.Array, reflect.Map, reflect.Pointer:
		return false
	}
	return true
}

// yamlFields maps each yaml key of struct t (inline fields merged) to its type.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",inline,") {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

func where(section string) string {
	if section == "" {
		return "the profile"
	}
	return fmt.Sprintf("%q", section)
}

func in(section string) string {
	if section == "" {
		return "at the top level"
	}
	return "in " + section
}

func quoteNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%q", n.Value)
}

// want says in words what a value of t looks like.
func want(t reflect.Type) string {
	switch t.String() {
	case "workloads.Rate":
		return "requests per second or inf"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "text"
	}
	return t.String()
}

// suggest returns the known key closest to k, or "" when none is close: the edit
// distance to a key, or to the key's tail after an underscore ("concurency" →
// "max_concurrency"), within a third of k's length.
func suggest(k string, fields map[string]reflect.Type) string {
	best, bestD := "", len(k)/3+1
	for name := range fields {
		d := levenshtein(k, name)
		for i := strings.IndexByte(name, '_'); i >= 0; {
			d = min(d, levenshtein(k, name[i+1:]))
			j := strings.IndexByte(name[i+1:], '_')
			if j < 0 {
				break
			}
			i += j + 1
		}
		if d < bestD || (d == bestD && best != "" && name < best) {
			best, bestD = name, d
		}
	}
	if bestD > max(1, len(k)/3) {
		return ""
	}
	return best
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

var yamlLine = regexp.MustCompile(`^line (\d+): `)

// rewordYAML turns a yaml.v3 error into "LINE: message" (" message" when it names
// no line), without the library's prefixes.
func rewordYAML(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	s = strings.TrimPrefix(s, "unmarshal errors:\n")
	s = strings.TrimSpace(strings.SplitN(s, "\n", 2)[0])
	if m := yamlLine.FindStringSubmatch(s); m != nil {
		return m[1] + ": " + s[len(m[0]):]
	}
	return " " + s
}

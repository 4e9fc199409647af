package profiles

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// syntaxError turns a YAML syntax error of file name into one line naming the line
// the parser stopped at and the key it was in. yaml.v3 names the line where the
// enclosing block began ("line 2: did not find expected key" for a key
// mis-indented on line 7), so the line is found again here: the first line that no
// longer parses, found by parsing ever longer prefixes of the file, and the key is
// the mapping the prefix that parsed was inside at that line's indentation.
func syntaxError(name string, data []byte, err error) error {
	msg := rewordYAML(err) // "LINE: message" or " message"
	text := msg
	if i := strings.Index(msg, ": "); i > 0 && !strings.HasPrefix(msg, " ") {
		text = msg[i+2:]
	} else {
		text = strings.TrimSpace(msg)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > 5000 {
		return fmt.Errorf("%s:%s", name, msg)
	}
	ok := 0 // the longest prefix (in lines) that parses
	for k := len(lines) - 1; k >= 0; k-- {
		var n yaml.Node
		if yaml.Unmarshal(bytes.Join(lines[:k], nil), &n) == nil {
			ok = k
			break
		}
	}
	stop := ok + 1 // 1-based: the line the parser stopped at
	if stop > len(lines) {
		return fmt.Errorf("%s:%s", name, msg)
	}
	line := string(lines[stop-1])
	indent := len(line) - len(strings.TrimLeft(line, " "))
	var prefix yaml.Node
	_ = yaml.Unmarshal(bytes.Join(lines[:ok], nil), &prefix)
	levels := openLevels(&prefix, "")
	in := ""
	var cols []string
	for _, l := range levels {
		if l.indent <= indent {
			in = l.path
		}
		of := "the top level"
		if l.path != "" {
			of = l.path
		}
		cols = append(cols, fmt.Sprintf("%s's at %d", of, l.indent))
	}
	where := "at the top level"
	if in != "" {
		where = "in " + in
	}
	out := fmt.Sprintf("%s:%d: %s (%s)", name, stop, text, where)
	key := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- "))
	if k, _, found := strings.Cut(key, ":"); found && !strings.ContainsAny(k, "[]{}\"'") && !levelAt(levels, indent) {
		spaces := "spaces"
		if indent == 1 {
			spaces = "space"
		}
		out = fmt.Sprintf("%s:%d: %s (%s): %q is indented %d %s, but the keys are at other columns (%s)",
			name, stop, text, where, k, indent, spaces, strings.Join(cols, ", "))
	}
	if lead := line[:len(line)-len(strings.TrimLeft(line, " \t"))]; strings.Contains(lead, "\t") {
		out += ": YAML indents with spaces, not tabs"
	}
	return fmt.Errorf("%s", out)
}

// level is a block mapping open at the end of a document: its key path and the
// indentation (spaces) of its keys.
type level struct {
	path   string
	indent int
}

// openLevels returns the mappings open at the end of the document n, outermost
// first: the root, then the value of its last key when that is a mapping (or a
// list of mappings), and so on.
func openLevels(n *yaml.Node, path string) []level {
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	switch n.Kind {
	case yaml.MappingNode:
		if len(n.Content) < 2 || n.Style&yaml.FlowStyle != 0 {
			return nil
		}
		out := []level{{path: path, indent: n.Column - 1}}
		k, v := n.Content[len(n.Content)-2], n.Content[len(n.Content)-1]
		sub := k.Value
		if path != "" {
			sub = path + "." + k.Value
		}
		return append(out, openLevels(v, sub)...)
	case yaml.SequenceNode:
		if len(n.Content) == 0 || n.Style&yaml.FlowStyle != 0 {
			return nil
		}
		return openLevels(n.Content[len(n.Content)-1], path)
	}
	return nil
}

// levelAt reports whether keys of an open mapping sit at indent.
func levelAt(levels []level, indent int) bool {
	for _, l := range levels {
		if l.indent == indent {
			return true
		}
	}
	return false
}

package profiles

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// BuiltinPrefix marks a built-in profile on the command line ("builtin:quant-compare").
const BuiltinPrefix = "builtin:"

// BuiltinInfo names a built-in profile and says what it runs.
type BuiltinInfo struct {
	Name, Description string
}

// Builtins lists the built-in profiles by name.
func Builtins() []BuiltinInfo {
	ents, _ := builtinFS.ReadDir("builtin")
	var out []BuiltinInfo
	for _, e := range ents {
		name := strings.TrimSuffix(e.Name(), ".yaml")
		p, err := Builtin(name)
		if err != nil {
			continue // a broken built-in fails its test, not the listing
		}
		out = append(out, BuiltinInfo{Name: name, Description: p.Description})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Builtin returns the built-in profile name (with or without the "builtin:" prefix).
func Builtin(name string) (*Profile, error) {
	name = strings.TrimPrefix(name, BuiltinPrefix)
	data, err := builtinFS.ReadFile(path.Join("builtin", name+".yaml"))
	if err != nil {
		var names []string
		ents, _ := builtinFS.ReadDir("builtin")
		for _, e := range ents {
			names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
		}
		return nil, fmt.Errorf("no built-in profile %q (built-in: %s)", name, strings.Join(names, ", "))
	}
	return Parse(BuiltinPrefix+name, data)
}

// BuiltinYAML returns the text of a built-in profile, to copy and edit.
func BuiltinYAML(name string) ([]byte, error) {
	if _, err := Builtin(name); err != nil {
		return nil, err
	}
	return builtinFS.ReadFile(path.Join("builtin", strings.TrimPrefix(name, BuiltinPrefix)+".yaml"))
}

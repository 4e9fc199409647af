package discover

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExpandPath(t *testing.T) {
	e := Env{Home: "/home/ada"}
	for in, want := range map[string]string{
		"~":                         "/home/ada",
		"~/models/x.gguf":           "/home/ada/models/x.gguf",
		"  ~/x.gguf\n":              "/home/ada/x.gguf",
		`"/path with space/x.gguf"`: "/path with space/x.gguf",
		"'~/q.gguf'":                "/home/ada/q.gguf",
		"file:///tmp/m.gguf":        "/tmp/m.gguf",
		"~bob/x.gguf":               "~bob/x.gguf",
		"$HOME/x.gguf":              "$HOME/x.gguf",
		"./rel.gguf":                "./rel.gguf",
		`"unbalanced`:               `"unbalanced`,
		"":                          "",
	} {
		if got := e.ExpandPath(in); got != want {
			t.Errorf("ExpandPath(%q) = %q; want %q", in, got, want)
		}
	}
	if got := (Env{}).ExpandPath("~/x"); got != "~/x" {
		t.Errorf("without a home, ExpandPath(~/x) = %q; want it unchanged", got)
	}
}

func TestCheckModelFile(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("README.md", []byte("# llmbench\n\nA workbench."), 0o644)
	writeModel(t, "ok.gguf", nil)
	writeModel(t, "part-00001-of-00002.gguf", map[string]any{"split.no": uint16(0), "split.count": uint16(2)})
	writeModel(t, "whole-00001-of-00002.gguf", map[string]any{"split.no": uint16(0), "split.count": uint16(2)})
	writeModel(t, "whole-00002-of-00002.gguf", map[string]any{"split.no": uint16(1), "split.count": uint16(2), "general.architecture": nil, "general.file_type": nil})
	writeModel(t, "nono-00001-of-00002.gguf", map[string]any{"split.count": uint16(2)})
	writeModel(t, "proj.gguf", map[string]any{"general.type": "mmproj", "general.architecture": "clip"})
	writeModel(t, "noarch.gguf", map[string]any{"general.architecture": nil})
	os.WriteFile("v1.gguf", []byte("GGUF\x01\x00\x00\x00"), 0o644)
	os.WriteFile("short.gguf", []byte("GG"), 0o644)
	os.Mkdir("dir.gguf", 0o755)
	cases := map[string]string{
		"ok.gguf":                   "",
		"README.md":                 `README.md: not a GGUF file (magic "# ll")`,
		"missing.gguf":              "missing.gguf: no such file",
		"dir.gguf":                  "dir.gguf: a folder, not a GGUF file",
		"short.gguf":                "short.gguf: not a GGUF file (2 bytes long)",
		"v1.gguf":                   "v1.gguf: bad GGUF header: unsupported GGUF version 1 (llmbench reads versions 2 and 3)",
		"part-00001-of-00002.gguf":  "part-00002-of-00002.gguf: missing (part 2 of 2)",
		"whole-00001-of-00002.gguf": "",
		"whole-00002-of-00002.gguf": "whole-00002-of-00002.gguf: part 2 of a split model in 2 parts: load its first part",
		"nono-00001-of-00002.gguf":  "nono-00001-of-00002.gguf: bad GGUF header: split model in 2 parts without a valid split.no",
		"proj.gguf":                 "proj.gguf: a vision projector (mmproj), not a model: pick the model it goes with",
		"noarch.gguf":               "noarch.gguf: no general.architecture: not a model",
		"":                          "no model file given",
	}
	for path, want := range cases {
		err := CheckModelFile(path)
		switch {
		case want == "" && err != nil:
			t.Errorf("CheckModelFile(%q) = %v; want nil", path, err)
		case want != "" && (err == nil || err.Error() != want):
			t.Errorf("CheckModelFile(%q) = %v; want %q", path, err, want)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("CheckModelFile(%q): %q is more than one line", path, err)
		}
	}
	if err := CheckModelFile(filepath.Join(dir, "ok.gguf")); err != nil {
		t.Errorf("absolute path: %v", err)
	}
}

// Package builtin holds the model embedded in the llmbench binary, so that the workbench
// runs on a fresh machine with no download.
package builtin

import _ "embed"

// Name is the display name of the built-in model.
const Name = "stories260K"

// Stories260K is the GGUF file of Karpathy's stories260K (see SOURCE.md).
//
//go:embed stories260K.gguf
var Stories260K []byte

package synth

import "fmt"

// FileTypeName returns llama.cpp's name for a general.file_type value ("Q4_K_M"), or
// "unknown (N)".
func FileTypeName(id uint32) string {
	for _, f := range fileTypes {
		if f.ID == id {
			return f.Name
		}
	}
	return fmt.Sprintf("unknown (%d)", id)
}

module llmbench

go 1.26.0

require (
	github.com/dlclark/regexp2 v1.12.0
	golang.org/x/sys v0.49.0
)

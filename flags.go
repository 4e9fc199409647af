package main

// Flag parsing shared by the commands: llama-bench's list flags, vLLM's nargs flags,
// one-line usage errors.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"llmbench/workloads"
)

// errHelp marks -h/--help: the usage was printed on stdout and the command exits 0.
var errHelp = errors.New("help")

// flagGroup is a titled group of flags in a command's help.
type flagGroup struct {
	title string
	names []string // flag names, in the order shown
}

// newFlags returns a flag set that prints errors once and reports them as errUsage.
// Its help (-h, --help, on stdout, exit 0) starts with the examples, then the flags in
// groups (those in no group last).
func newFlags(name, args string, examples []string, groups ...flagGroup) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() { printUsage(os.Stdout, fs, args, examples, groups) }
	return fs
}

// printUsage writes a command's help: examples, usage line, grouped flags.
func printUsage(w io.Writer, fs *flag.FlagSet, args string, examples []string, groups []flagGroup) {
	for _, e := range examples {
		fmt.Fprintf(w, "  %s\n", e)
	}
	if len(examples) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "usage: llmbench %s %s\n", fs.Name(), args)
	shown := map[string]bool{}
	section := func(title string, names []string) {
		var b strings.Builder
		for _, n := range names {
			if f := fs.Lookup(n); f != nil && !shown[n] {
				shown[n] = true
				kind, usage := flag.UnquoteUsage(f)
				fmt.Fprintf(&b, "  -%s %s\n    \t%s", n, kind, usage)
				if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
					fmt.Fprintf(&b, " (default %s)", f.DefValue)
				}
				b.WriteString("\n")
			}
		}
		if b.Len() > 0 {
			fmt.Fprintf(w, "\n%s:\n%s", title, b.String())
		}
	}
	for _, g := range groups {
		section(g.title, g.names)
	}
	var rest []string
	fs.VisitAll(func(f *flag.Flag) { rest = append(rest, f.Name) })
	title := "flags"
	if len(groups) > 0 {
		title = "other flags"
	}
	section(title, rest)
}

// parse parses args: a flag error is one line on stderr (errUsage), -h the help.
func parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(os.Stderr)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return errHelp
	default:
		fmt.Fprintf(os.Stderr, "llmbench %s: %v\n", fs.Name(), err)
	}
	return errUsage
}

// usageErr prints err as the command's one line and returns errUsage.
func usageErr(cmd string, err error) error {
	fmt.Fprintf(os.Stderr, "llmbench %s: %v\n", cmd, err)
	return errUsage
}

// serveBenchNargs are the flags that take several values, as vllm bench serve's
// argparse nargs do: "--goodput ttft:100 tpot:50" becomes two --goodput flags.
var serveBenchNargs = map[string]int{"--header": -1, "--metadata": -1, "--goodput": -1, "--compare": 2, "--lora-modules": -1}

// expandNargs rewrites nargs-style arguments into repeated flags.
func expandNargs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		n, ok := serveBenchNargs[a]
		if !ok {
			out = append(out, a)
			continue
		}
		taken := 0
		for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && (n < 0 || taken < n) {
			out = append(out, a, args[i+1])
			i++
			taken++
		}
		if taken == 0 {
			out = append(out, a)
		}
	}
	return out
}

// listFlag collects repeated values.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// optFloat and optInt are flags that remember whether they were given.
type optFloat struct{ v *float64 }

func (o *optFloat) String() string {
	if o.v == nil {
		return ""
	}
	return fmt.Sprint(*o.v)
}
func (o *optFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	o.v = &v
	return err
}

type optInt struct{ v *int }

func (o *optInt) String() string {
	if o.v == nil {
		return ""
	}
	return fmt.Sprint(*o.v)
}
func (o *optInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	o.v = &v
	return err
}

func parseKV(items []string, sep string, what string) (map[string]string, error) {
	m := map[string]string{}
	for _, it := range items {
		for _, part := range strings.Fields(it) {
			k, v, ok := strings.Cut(part, sep)
			if !ok {
				return nil, fmt.Errorf("%s %q: want KEY%sVALUE", what, part, sep)
			}
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return m, nil
}

// benchInts is a repeatable flag of llama-bench integer lists ("1,2", "1-16*2").
type benchInts struct{ v *[]int }

func (f benchInts) String() string {
	if f.v == nil {
		return ""
	}
	return strings.Trim(strings.ReplaceAll(fmt.Sprint(*f.v), " ", ","), "[]")
}

func (f benchInts) Set(s string) error {
	v, err := workloads.ParseIntList(s)
	if err != nil {
		return err
	}
	*f.v = append(*f.v, v...)
	return nil
}

// benchStrings is a repeatable flag of comma-separated names.
type benchStrings struct{ v *[]string }

func (f benchStrings) String() string {
	if f.v == nil {
		return ""
	}
	return strings.Join(*f.v, ",")
}

func (f benchStrings) Set(s string) error {
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x == "" {
			return errors.New("empty item in list")
		}
		*f.v = append(*f.v, x)
	}
	return nil
}

// benchFA is the repeatable -fa flag as llama-bench reads it: on/off/auto, 1/0/-1,
// true/false, enabled/disabled, comma-separated (auto is recorded as -1).
type benchFA struct{ v *[]int }

func (f benchFA) String() string { return benchInts(f).String() }

func (f benchFA) Set(s string) error {
	for _, x := range strings.Split(s, ",") {
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "0", "off", "false", "no", "disabled":
			*f.v = append(*f.v, 0)
		case "1", "on", "true", "yes", "enabled":
			*f.v = append(*f.v, 1)
		case "-1", "auto":
			*f.v = append(*f.v, workloads.FlashAttnAuto)
		default:
			return fmt.Errorf("%q is not on, off or auto (1, 0, -1)", x)
		}
	}
	return nil
}

// benchPGs is the repeatable -pg P,N flag.
type benchPGs struct{ v *[]workloads.PG }

func (f benchPGs) String() string { return "" }

func (f benchPGs) Set(s string) error {
	pg, err := workloads.ParsePG(s)
	if err != nil {
		return err
	}
	*f.v = append(*f.v, pg)
	return nil
}

// benchSeconds is --delay: seconds ("2", "0.5") or a Go duration ("500ms").
type benchSeconds struct{ v *float64 }

func (f benchSeconds) String() string {
	if f.v == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.v, 'g', -1, 64)
}

func (f benchSeconds) Set(s string) error {
	if v, err := strconv.ParseFloat(s, 64); err == nil && v >= 0 {
		*f.v = v
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("%q is not a number of seconds or a duration such as 500ms", s)
	}
	*f.v = d.Seconds()
	return nil
}

// parseInterspersed parses flags before and after the positional arguments
// ("run builtin:x --headless"), returning the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parse(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		rest := fs.Args()
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

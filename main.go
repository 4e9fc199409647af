// Command llmbench is a terminal workbench for measuring LLM inference: an in-process
// GGUF engine, llama-bench style benchmarks, a vllm bench serve style load generator,
// telemetry and power sweeps, a TUI, profiles and a results store.
//
// main.go owns the subcommands; each cmd_*.go parses its flags into a workloads.Job
// and hands it to workloads/jobs (headless) or the TUI.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand: its name, a one-line summary and its entry point.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string) error
}

func commands() []command {
	return []command{
		{"tui", "terminal workbench: set up a bench or serve-bench run, watch it live, read its results", runTUI},
		{"generate", "generate text from a prompt, streaming tokens, then report speed", runGenerate},
		{"serve", "OpenAI-compatible HTTP server over the engine (/v1/completions, /v1/chat/completions, /metrics)", runServe},
		{"serve-bench", "serving benchmark: vllm bench serve parity (in-process or HTTP)", runServeBench},
		{"model", "model info FILE | model synth --shape S --type T -o FILE | model quantize IN OUT TYPE", runModel},
		{"run", "run a profile (YAML file or builtin:NAME) headless or in the TUI; --list, --history", runRun},
		{"bench", "llama-bench: pp/tg tests over lists of parameters; --compare A.json B.json", runBench},
		{"batch", "TGI's benchmark: prefill and decode latency per batch size, TGI's tables; --merge A.json B.json", runBatch},
		{"throughput", "JetStream's throughput benchmark: sharegpt prompts, --batch-size, --max-cache-length (rolling window when shorter than input + output), bf16 vs int8 rows", runThroughput},
		{"kernels", "kernel benchmarks: attention masks as attention-gym compares them, paged attention; --suite", runKernels},
		{"telemetry", "GPU (NVML) and CPU readings: power, clocks, energy, utilisation; --watch, --json", runTelemetry},
		{"sysinfo", "CPU model, features, cores and measured memory read bandwidth", runSysinfo},
		{"version", "print the version", func(context.Context, []string) error { fmt.Println("llmbench", version); return nil }},
	}
}

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func usage() {
	fmt.Fprintf(os.Stderr, "usage: llmbench <command> [flags]\n       llmbench            (on a terminal: the workbench, as llmbench tui)\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(os.Stderr, "\nRun 'llmbench <command> -h' for a command's flags.\n")
}

// errUsage marks an error that is the user's command line; it exits with status 2.
var errUsage = errors.New("usage")

func main() {
	args := os.Args[1:]
	if len(args) == 0 && isTerminal(os.Stdin) && isTerminal(os.Stdout) {
		args = []string{"tui"} // the card's interactive workbench; scripts and pipes get usage
	}
	if len(args) == 0 {
		usage()
		os.Exit(2)
	}
	name := args[0]
	if name == "-h" || name == "--help" || name == "help" {
		usage()
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, c := range commands() {
		if c.name == name {
			err := c.run(ctx, args[1:])
			switch {
			case err == nil:
				return
			case errors.Is(err, errHelp):
				return
			case errors.Is(err, errUsage):
				os.Exit(2)
			case errors.Is(err, context.Canceled):
				fmt.Fprintln(os.Stderr, "llmbench: interrupted")
				os.Exit(130)
			default:
				fmt.Fprintln(os.Stderr, "llmbench:", err)
				os.Exit(1)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "llmbench: unknown command %q\n\n", name)
	usage()
	os.Exit(2)
}

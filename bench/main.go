// Command bench runs the project's benchmark experiments and prints their
// results, as a table or (with -json) as one JSON object per line.
//
// Usage:
//
//	go run ./bench <experiment> [flags]
//
// Run "go run ./bench" to list the experiments. Every number printed comes
// from a run the command does.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
)

// experiment is one benchmark the command can run.
type experiment struct {
	summary string
	// run parses its own flags from args and runs.
	run func(args []string) error
}

var experiments = map[string]experiment{}

func register(name, summary string, run func(args []string) error) {
	if _, dup := experiments[name]; dup {
		panic("bench: experiment registered twice: " + name)
	}
	experiments[name] = experiment{summary: summary, run: run}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: go run ./bench <experiment> [flags]\n\nexperiments:")
	names := make([]string, 0, len(experiments))
	for n := range experiments {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-10s %s\n", n, experiments[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun 'go run ./bench <experiment> -h' for an experiment's flags.")
}

func main() {
	flag.Usage = usage
	flag.Parse()
	if flag.NArg() < 1 {
		usage()
		os.Exit(2)
	}
	e, ok := experiments[flag.Arg(0)]
	if !ok {
		fmt.Fprintf(os.Stderr, "bench: unknown experiment %q\n\n", flag.Arg(0))
		usage()
		os.Exit(2)
	}
	if err := e.run(flag.Args()[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

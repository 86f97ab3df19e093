// Command dica fits Domain-Invariant Component Analysis to cytometry data
// (FCS or CSV files, one domain per sample) and projects cells with a fitted
// model.
//
// Run "dica help" for the commands and "dica CMD -h" for a command's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/internal/atomicfile"
	"github.com/dicalab/dica/internal/escape"
)

type command struct {
	summary string
	usage   string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"fit":        {"fit a model to data", fitUsage, runFit},
		"transform":  {"project cells with a fitted model (CSV, FCS, Parquet or AnnData out)", transformUsage, runTransform},
		"predict":    {"gate new samples with the learner a model carries", predictUsage, runPredict},
		"plan":       {"choose a fit's landmarks and bandwidths, for a fit in shards", planUsage, runPlan},
		"accumulate": {"accumulate statistics of one shard of the data with a plan", accumulateUsage, runAccumulate},
		"merge":      {"merge shard statistics and solve into a model", mergeUsage, runMerge},
		"info":       {"describe FCS files and model files", infoUsage, runInfo},
		"demo":       {"fit KPCA, UDICA, COIR and DICA on built-in toy data", demoUsage, runDemo},
		"eval":       {"leave-domains-out evaluation of methods and solvers", evalUsage, runEval},
		"plot":       {"draw projections, spectra and evaluations (PNG or SVG)", plotUsage, runPlot},
	}
}

const topUsage = `dica: Domain-Invariant Component Analysis for cytometry.

DICA learns components under which cells from different samples (patients,
centers, instruments) look alike while what predicts the cell population is
kept, so a classifier trained on some samples works on new ones.

Usage:

  dica <command> [flags] [files]

Commands:
%s
Examples:

  # Built-in toy data, no files needed:
  dica demo

  # 16 CyTOF samples (one CSV per sample, no header), gated populations in
  # row-aligned label files, ungated cells (label 0) left out:
  dica fit --data 'sample*.csv' --labels 'labels*.csv' --labels-ignore 0 \
      --transform log1p --rank 500 --out cytof.dica

  # FCS files, one sample each, a few markers by name, unsupervised:
  dica fit --method udica --data 'patient*.fcs' --channels CD4,CD8,CD3 \
      --transform asinh:150 --compensate --out gvhd.dica

  # Project new cells with the model's own preprocessing and write them
  # back as FCS (every channel, the components, the sample):
  dica transform --model gvhd.dica --data new.fcs --out new_dica.fcs

  # Look before believing: cells colored by population and by sample:
  dica plot --model cytof.dica --data 'sample*.csv' --labels 'labels*.csv' \
      --labels-ignore 0 --out cytof.png

  # What a model expects (channels, compensation, transform) and holds:
  dica info cytof.dica

Run 'dica <command> -h' for a command's flags.
`

func usage(w io.Writer) {
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "  %-11s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintf(w, topUsage, b.String())
}

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 4)
	notifySignals(sigs)
	go watchSignals(sigs, cancel, os.Stderr, die)
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// notifySignals relays to c the signals that stop dica: SIGINT, SIGTERM,
// SIGHUP (the terminal closed) and SIGQUIT, each unless it was ignored
// when dica started (nohup, a background job of a script), so that it stays
// ignored.
func notifySignals(c chan<- os.Signal) {
	for _, s := range []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		if !signal.Ignored(s) {
			signal.Notify(c, s)
		}
	}
}

// watchSignals stops the command on the signals from c. The first SIGINT,
// SIGTERM or SIGHUP calls cancel: the command stops at its next block,
// removes the outputs it was writing (the previous versions of the files
// stay) and exits with status 1. A second signal, or SIGQUIT, stops at
// once: the temporary files and folders of the outputs in progress are
// removed (an output being renamed into place completes first) and die is
// called with the signal.
func watchSignals(c <-chan os.Signal, cancel func(), stderr io.Writer, die func(os.Signal)) {
	first := true
	for s := range c {
		if first && s != syscall.SIGQUIT {
			first = false
			cancel()
			if s == os.Interrupt && isTerminal(stderr) {
				say(stderr, "\ndica: stopping; interrupt again to stop at once\n")
			}
			continue
		}
		atomicfile.RemoveTemporaries()
		say(stderr, fmt.Sprintf("\ndica: %v: stopped at once; the outputs in progress were removed\n", s))
		die(s)
		return
	}
}

// say writes msg to w, waiting at most 100 ms: a stopped terminal or a
// full pipe must not hold up a process that is stopping.
func say(w io.Writer, msg string) {
	done := make(chan struct{})
	go func() {
		io.WriteString(w, msg)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(100 * time.Millisecond):
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// die ends the process by the signal s, as if dica had not caught it, so
// that its parent (a shell) sees it stopped by s; SIGQUIT prints Go's dump
// of the goroutines first. Where a process cannot signal itself, it exits
// with status 128 + s.
func die(s os.Signal) {
	signal.Reset(s)
	if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(s) == nil {
		time.Sleep(time.Second)
	}
	n := 1
	if sn, ok := s.(syscall.Signal); ok {
		n = int(sn)
	}
	os.Exit(128 + n)
}

// run executes the command line and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" {
		if len(args) > 1 {
			if c, ok := commands()[args[1]]; ok {
				fmt.Fprint(stdout, c.usage)
				return 0
			}
		}
		usage(stdout)
		return 0
	}
	c, ok := commands()[name]
	if !ok {
		fmt.Fprintf(stderr, "dica: unknown command %s\n\nRun 'dica help' for the commands.\n", escape.String(name, 0))
		return 2
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1)) // a command may set it (softLimit)
	err := commandError(c.run(ctx, args[1:], stdout, stderr))
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		fmt.Fprintf(stderr, "dica %s: interrupted; no output was written\n", name)
		return 1
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "dica %s: %v\n\nRun 'dica %s -h' for help.\n", name, userMessage(err), name)
		return 2
	default:
		fmt.Fprintf(stderr, "dica %s: %v\n", name, userMessage(err))
		return 1
	}
}

// packages are the packages whose names begin library errors.
var packages = []string{"csvio", "fcs", "dica", "preprocess", "dataset", "eval", "exact", "nystrom", "rff", "lanczos",
	"kernel", "approx", "svm", "krr", "anndata", "parquetio", "figure", "mixing", "ingest", "output"}

// userMessage turns a library error into the command's words: the package
// names that begin library errors go, a CSV line over the limit names the
// flag that sets it, and the message is cut to maxMessage bytes.
func userMessage(err error) string {
	msg := err.Error()
	var pe *csvio.ParseError
	if errors.As(err, &pe) && pe.Option != "" {
		if f, ok := flagNames[pe.Option]; ok {
			msg = strings.Replace(msg, "("+pe.Option+")", "("+f+")", 1)
		}
	}
	var te *fcs.TruncatedError
	if errors.As(err, &te) {
		msg = strings.Replace(msg, "EventOptions.AllowTruncated", "--allow-truncated", 1)
	}
	msg = stripPackages(msg)
	// A message is a paragraph: values echoed from the command line or a
	// file are cut (readers quote at most 80 bytes of a file already).
	if len(msg) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = fmt.Sprintf("%s... (%d more bytes)", msg[:cut], len(msg)-cut)
	}
	return msg
}

// stripPackages removes the package names that begin msg or one of its
// parts ("x.csv: csvio: ..." is "x.csv: ...").
func stripPackages(msg string) string {
	var b strings.Builder
	for i, part := range strings.SplitAfter(msg, ": ") {
		for again := true; again; {
			again = false
			for _, p := range packages {
				if rest, ok := strings.CutPrefix(part, p+": "); ok && (i > 0 || b.Len() == 0) {
					part, again = rest, true
				}
			}
		}
		b.WriteString(part)
	}
	return b.String()
}

// maxMessage is the longest error message the command prints, in bytes.
const maxMessage = 1000

// errUsage marks errors in the command line itself (errors.Is).
var errUsage = errors.New("usage")

// usageError is an error in the command line: run prints it and points to
// the command's help.
type usageError struct{ msg string }

func (e usageError) Error() string        { return e.msg }
func (e usageError) Is(target error) bool { return target == errUsage }

func usageErr(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

// newFlags returns a flag set for the command. Its errors are returned,
// not printed: parseArgs prints the whole help for -h, and run prints a
// one-line error for anything else.
func newFlags(name, text string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("dica "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	helps.Store(fs, help{text, stderr})
	return fs
}

// help is the usage text of a flag set and where to print it.
type help struct {
	text string
	w    io.Writer
}

var helps sync.Map // *flag.FlagSet -> help

// printHelp prints the usage text and the flags of fs, one line each. A
// help longer than maxHelpLines prints the usage's first paragraphs (the
// synopsis and what the command does) and points to 'dica help CMD' for
// the rest.
func printHelp(fs *flag.FlagSet) {
	v, ok := helps.Load(fs)
	if !ok {
		return
	}
	h := v.(help)
	var flags strings.Builder
	writeFlags(&flags, fs)
	text := h.text
	if lines(text)+lines(flags.String())+2 > maxHelpLines {
		text = synopsis(text) + "Run 'dica help " + strings.TrimPrefix(fs.Name(), "dica ") + "' for the full description and examples.\n"
	}
	fmt.Fprint(h.w, text)
	fmt.Fprintln(h.w, "\nFlags:")
	fmt.Fprint(h.w, flags.String())
}

// maxHelpLines is the longest help -h prints.
const maxHelpLines = 80

func lines(s string) int { return strings.Count(s, "\n") }

// synopsis returns the first two paragraphs of a usage text: the usage
// line and what the command does.
func synopsis(text string) string {
	paras := strings.SplitAfterN(text, "\n\n", 3)
	if len(paras) < 2 {
		return text
	}
	return paras[0] + paras[1]
}

// valueNames are the names the help gives to the values of flags whose
// usage names none (flag.UnquoteUsage names them by their Go type).
var valueNames = map[string]string{"float": "NUMBER", "int": "N", "uint": "N", "string": "TEXT", "value": "VALUE", "duration": "DURATION"}

// writeFlags writes the flags of fs as the help shows them: "--name VALUE",
// the value named by the usage's back-quoted word (or by its kind: NUMBER,
// N, TEXT; none for a switch), then the usage and a non-empty default.
func writeFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		if n, ok := valueNames[name]; ok {
			name = n
		} else {
			name = strings.ToUpper(name)
		}
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		if len(line) < 26 {
			line += strings.Repeat(" ", 26-len(line))
		} else {
			line += "  "
		}
		fmt.Fprintf(w, "%s%s", line, strings.ReplaceAll(usage, "\n", " "))
		if d := f.DefValue; d != "" && d != "false" && d != "0" && !isZeroList(d) {
			fmt.Fprintf(w, " (default %s)", d)
		}
		fmt.Fprintln(w)
	})
}

// isZeroList reports whether a default value is an empty list.
func isZeroList(d string) bool { return d == "[]" }

// parseFlags is fs.Parse that prints the help for -h and turns a bad flag
// into a usage error (one line, then "Run 'dica CMD -h' for help").
func parseFlags(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		printHelp(fs)
		return err
	}
	// The flag package names flags with one dash; the help uses two.
	msg := doubleDash(strings.ReplaceAll(err.Error(), "flag -", "-"))
	if f, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		msg = "unknown flag " + f
	} else if f, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		msg = f + " needs a value"
	}
	return usageErr("%s", msg)
}

// doubleDash writes the flags that msg names with one dash ("-rank") with
// two ("--rank"): a dash at the start of msg or after a space or a quote,
// followed by a letter.
func doubleDash(msg string) string {
	var b strings.Builder
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c == '-' && (i == 0 || msg[i-1] == ' ' || msg[i-1] == '"') && i+1 < len(msg) && isLetter(msg[i+1]) {
			b.WriteByte('-')
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// parseArgs parses flags and positional arguments in any order
// ("dica merge a.stats b.stats --out m.dica" as well as "--out m.dica
// a.stats b.stats"; the flag package alone stops at the first file) and
// returns the positional ones. Everything after "--" is positional.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if k := len(args) - len(rest); k > 0 && args[k-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

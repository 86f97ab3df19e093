package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/fcs"
)

const infoUsage = `Usage: dica info [--json] FILE.fcs|MODEL.dica...

Describe FCS files: version, data type, byte order, number of events, the
channels (name $PnN, marker $PnS, bits, range) and the first and last events,
as a cytometrist would check a file before a fit. A model file (from dica fit,
dica merge or the Beam pipeline) is described as dica fit --report prints it:
cells, markers, domains, classes, method, kernel width and eigenvalues.

A damaged file is still described as far as it can be read: for a truncated
file (fewer events than $TOT declares) or one holding only HEADER and TEXT,
the summary is printed, then the problem on stderr; the other files are
described too, and the exit status is 1 if any file had a problem. Deviations
from the standard that the reader worked around (e.g. disagreeing DATA
offsets) are listed on stderr as warnings.

With --json each file gives one JSON object on its own line, with the keys
version, datatype, byteorder, events, parameters (a list of {name, label,
bits, range}), first_event and last_event, plus file, and warnings and error
when there are any. Event values that are NaN or infinite are written as
null (JSON has no such numbers). A model gives the keys of dica fit --report
json, plus file.

Examples:

  dica info sample.fcs
  dica info --json sample.fcs | jq .parameters
  dica info 'plate1/*.fcs'
  dica info cytof.dica
`

// infoJSON is the JSON form of one file: the keys of fcs.Info, then the
// file name, the reader's warnings and the error, if any.
type infoJSON struct {
	fcs.Info
	File     string   `json:"file"`
	Warnings []string `json:"warnings,omitempty"`
	Error    string   `json:"error,omitempty"`
}

func runInfo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("info", infoUsage, stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	files, err := expand(fs.Args(), "files")
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageErr("no file")
	}
	failed := 0
	for i, path := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !*asJSON && len(files) > 1 {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "%s\n", path)
		}
		if err := describe(path, *asJSON, stdout, stderr); err != nil {
			var out outputError
			if errors.As(err, &out) {
				return out.err
			}
			fmt.Fprintf(stderr, "dica info: %v\n", err)
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d files could not be read completely (see above)", failed, len(files))
	}
	return nil
}

// outputError marks a failure to write the output, which ends the command.
type outputError struct{ err error }

func (e outputError) Error() string { return e.err.Error() }

// describe prints the summary of the first data set of the file at path and
// its warnings, and returns the error that reading it gave, if any (after
// printing what could be read), naming the file.
func describe(path string, asJSON bool, stdout, stderr io.Writer) error {
	if isModel(path) {
		return describeModel(path, asJSON, stdout)
	}
	f, err := fcs.Open(path)
	if err != nil {
		return err // names the file
	}
	in, infoErr := f.Info()
	warns := f.Warnings()
	f.Close()
	if asJSON {
		js := infoJSON{Info: in, File: path, Warnings: warns}
		if infoErr != nil {
			js.Error = infoErr.Error()
		}
		b, err := json.Marshal(js)
		if err != nil {
			return outputError{fmt.Errorf("%s: %w", path, err)}
		}
		if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
			return outputError{err}
		}
	} else {
		if err := in.WriteText(stdout); err != nil {
			return outputError{err}
		}
		for _, w := range warns {
			fmt.Fprintf(stderr, "dica info: %s: warning: %s\n", path, w)
		}
	}
	if infoErr != nil {
		return fmt.Errorf("%s: %w", path, infoErr)
	}
	return nil
}

// isModel reports whether the file at path starts as a dica model file.
func isModel(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [8]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == dica.ModelMagic
}

// describeModel prints the summary of the model file at path.
func describeModel(path string, asJSON bool, stdout io.Writer) error {
	m, err := dica.Load(path)
	if err != nil {
		return err // names the file
	}
	r := newReport(m, 0)
	r.PeakRSSMB = 0
	if !asJSON {
		if err := writeReport(stdout, r); err != nil {
			return outputError{err}
		}
		return nil
	}
	b, err := json.Marshal(struct {
		fitReport
		File string `json:"file"`
	}{r, path})
	if err != nil {
		return outputError{fmt.Errorf("%s: %w", path, err)}
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
		return outputError{err}
	}
	return nil
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dicalab/dica/csvio"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/fcs"
)

const infoUsage = `Usage: dica info [--json] [--all-datasets] FILE.fcs|MODEL.dica|FOLDER...

Describe FCS files: version, data type, byte order, number of events, the
channels (name $PnN, marker $PnS, bits, range), whether the file carries a
spillover matrix (its keyword and size), and the first and last events, as
a cytometrist would check a file before a fit. A folder stands for the FCS
files in it, in natural order (sample2 before sample10), as for dica fit.
A model file (from dica fit, dica merge or the Beam pipeline) is described
as dica fit --report prints it: cells, markers, domains, classes, method,
kernel width and eigenvalues.

A file may hold several data sets (chained by $NEXTDATA): the first is
described, and --all-datasets describes every one, as dica fit
--all-datasets reads them.

A damaged file is still described as far as it can be read: for a truncated
file (fewer events than $TOT declares) or one holding only HEADER and TEXT,
the summary is printed, then the problem on stderr; the other files are
described too, and the exit status is 1 if any file had a problem. What the
reader warns about is listed on stderr (with --json too): deviations from the
standard that it worked around (e.g. disagreeing DATA offsets), channels
sharing a $PnN (listed as NAME#k, the name --channels then takes), a DATA
segment holding more events than $TOT, an unknown FCS version.

With --json each data set gives one JSON object on its own line, with the
keys version, datatype, byteorder, events, parameters (a list of {name,
label, bits, range}), spillover (null, or {keyword, channels}), first_event
and last_event, plus file, dataset (with --all-datasets: 1, 2, ...), and
warnings and error when there are any. Event values that are NaN or infinite
are written as null (JSON has no such numbers). A model gives the keys of
dica fit --report json, plus file.

Examples:

  dica info sample.fcs
  dica info --json sample.fcs | jq .parameters
  dica info 'plate1/*.fcs'
  dica info plate1/
  dica info --all-datasets multi.fcs
  dica info cytof.dica
`

// infoJSON is the JSON form of one data set: the keys of fcs.Info, then
// the file name, its place in the file (with --all-datasets), the reader's
// warnings and the error, if any.
type infoJSON struct {
	fcs.Info
	File     string   `json:"file"`
	DataSet  int      `json:"dataset,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	Error    string   `json:"error,omitempty"`
}

func runInfo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("info", infoUsage, stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per data set")
	all := fs.Bool("all-datasets", false, "describe every data set of files holding several ($NEXTDATA)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	files, err := expand(fs.Args(), "files")
	if err != nil {
		return err
	}
	if files, err = infoFolders(files); err != nil {
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
		errs, err := describe(path, *asJSON, *all, stdout, stderr)
		var out outputError
		if errors.As(err, &out) {
			return out.err
		}
		if err != nil {
			errs = append(errs, err)
		}
		for _, err := range errs {
			fmt.Fprintf(stderr, "dica info: %v\n", err)
		}
		if len(errs) > 0 {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d files could not be read completely (see above)", failed, len(files))
	}
	return nil
}

// infoFolders replaces each folder among files by the FCS files in it
// (regular files, not hidden, that fcs.Detect accepts), in natural order,
// and drops the files already listed. A folder without FCS files is an
// error.
func infoFolders(files []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range files {
		fi, err := os.Stat(p)
		if err != nil || !fi.IsDir() {
			add(p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		var in []string
		for _, e := range ents {
			f := filepath.Join(p, e.Name())
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && fcs.Detect(f) {
				in = append(in, f)
			}
		}
		if len(in) == 0 {
			return nil, usageErr("%s is a folder without FCS files (.fcs, .lmd, or files starting with \"FCS\"); name other files directly", p)
		}
		slices.SortFunc(in, csvio.NaturalCompare)
		for _, f := range in {
			add(f)
		}
	}
	return out, nil
}

// outputError marks a failure to write the output, which ends the command.
type outputError struct{ err error }

func (e outputError) Error() string { return e.err.Error() }

// describe prints the summary of the first data set of the file at path,
// or of every data set with all, and the reader's warnings. It returns the
// errors that reading the data sets gave (after printing what could be
// read), each naming the file and data set, or the error that kept the
// file from being read at all.
func describe(path string, asJSON, all bool, stdout, stderr io.Writer) ([]error, error) {
	if isModel(path) {
		return nil, describeModel(path, asJSON, stdout)
	}
	var sets []*fcs.File
	if all {
		s, err := fcs.OpenAll(path)
		if err != nil {
			return nil, err // names the file
		}
		sets = s
	} else {
		f, err := fcs.Open(path)
		if err != nil {
			return nil, err // names the file
		}
		sets = []*fcs.File{f}
	}
	defer func() {
		for _, f := range sets {
			f.Close()
		}
	}()
	var errs []error
	for k, f := range sets {
		name := path
		if k > 0 {
			name = fmt.Sprintf("%s (data set %d)", path, k+1)
		}
		in, infoErr := f.Info()
		warns := f.Warnings()
		if asJSON {
			js := infoJSON{Info: in, File: path, Warnings: warns}
			if all {
				js.DataSet = k + 1
			}
			if infoErr != nil {
				js.Error = infoErr.Error()
			}
			b, err := json.Marshal(js)
			if err != nil {
				return errs, outputError{fmt.Errorf("%s: %w", name, err)}
			}
			if _, err := fmt.Fprintf(stdout, "%s\n", b); err != nil {
				return errs, outputError{err}
			}
		} else {
			if len(sets) > 1 {
				if k > 0 {
					fmt.Fprintln(stdout)
				}
				fmt.Fprintf(stdout, "data set %d of %d\n", k+1, len(sets))
			}
			if err := in.WriteText(stdout); err != nil {
				return errs, outputError{err}
			}
		}
		for _, w := range warns {
			fmt.Fprintf(stderr, "dica info: %s: warning: %s\n", name, w)
		}
		if infoErr != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, infoErr))
		}
	}
	if !all && sets[0].NextData() != 0 {
		fmt.Fprintf(stderr, "dica info: %s: note: the file holds more data sets; --all-datasets describes them all\n", path)
	}
	return errs, nil
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

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/dicalab/dica/anndata"
	"github.com/dicalab/dica/dataset"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/ingest"
	"github.com/dicalab/dica/parquetio"
	"github.com/dicalab/dica/preprocess"
)

const infoUsage = `Usage: dica info [--json] [--all-datasets] FILES...

Describe the files dica reads and writes: FCS files, models (.dica),
statistics (.stats), plans (.plan), dica's Parquet, AnnData (.zarr) and
CSV outputs, and other CSV and Parquet files. Flags may come before or
after the files.

FCS files: version, data type, byte order, number of events, the
channels (name $PnN, marker $PnS, bits, range), whether the file carries a
spillover matrix (its keyword and size), and the first and last events, as
a cytometrist would check a file before a fit. A folder stands for the FCS
files in it, in natural order (sample2 before sample10), as for dica fit.
A model file (from dica fit, dica merge or the Beam pipeline) is described
as dica fit --report prints it: cells, markers, domains, classes, method,
kernel width, eigenvalues and how it expects its data. Statistics (dica
accumulate) and plans (dica plan) give their cells, samples, settings and
preprocessing; dica's outputs give their columns and what each holds, and
the model that made them.

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
  dica info cytof.dica --json
  dica info part1.stats cells.parquet cells.zarr
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
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	files, err := expand(pos, "files")
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
		errs, err := describe(ctx, path, *asJSON, *all, stdout, stderr)
		var out outputError
		if errors.As(err, &out) {
			return out.err
		}
		if err != nil {
			errs = append(errs, err)
		}
		for _, err := range errs {
			fmt.Fprintf(stderr, "dica info: %s\n", userMessage(err))
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
		if err != nil || !fi.IsDir() || ingest.KindOf(p) == ingest.AnnData {
			add(p)
			continue
		}
		in, err := ingest.FolderFCS(p)
		if err != nil {
			return nil, err
		}
		if len(in) == 0 {
			return nil, usageErr("%s is a folder without FCS files (.fcs, .lmd, or files starting with \"FCS\"); name other files directly", p)
		}
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
func describe(ctx context.Context, path string, asJSON, all bool, stdout, stderr io.Writer) ([]error, error) {
	if err := notStream(path); err != nil {
		return nil, err
	}
	switch kind := fileKind(path); kind {
	case "model":
		return nil, describeModel(ctx, path, asJSON, stdout)
	case "stats", "plan":
		return nil, describePlanFile(ctx, path, kind, asJSON, stdout)
	case "parquet", "zarr", "csv":
		return nil, describeTable(path, kind, asJSON, stdout)
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

// notStream returns an error for a path that is a pipe, a socket or a
// device: info opens a file once to learn its kind and again to describe
// it, so it would read a stream from the middle, and the first open of a
// named pipe waits for its writer where a signal cannot stop it.
func notStream(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.IsDir() || fi.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("%s is %s: dica info reads a file more than once (to learn its kind, then to describe it); save the stream to a file first (for example: cat > model.dica)", path, ingest.StreamKind(fi.Mode()))
}

// fileKind says what the file at path is: "model", "stats" or "plan" (by
// their magic numbers), "zarr" (an AnnData store), "parquet", "fcs", or
// "csv" for other files.
func fileKind(path string) string {
	if f, err := os.Open(path); err == nil {
		var magic [8]byte
		_, err = io.ReadFull(f, magic[:])
		f.Close()
		if err == nil {
			switch string(magic[:]) {
			case dica.ModelMagic:
				return "model"
			case "DICASTAT":
				return "stats"
			case "DICAPLAN":
				return "plan"
			}
		}
	}
	switch ingest.KindOf(path) {
	case ingest.AnnData:
		return "zarr"
	case ingest.Parquet:
		return "parquet"
	case ingest.FCS:
		return "fcs"
	}
	return "csv"
}

// describeModel prints the summary of the model file at path.
func describeModel(ctx context.Context, path string, asJSON bool, stdout io.Writer) error {
	m, err := dica.LoadContext(ctx, path, dica.LoadOptions{})
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

// planReport describes statistics or a plan: the settings of the fit they
// belong to, and for statistics the cells they summarize.
type planReport struct {
	Kind              string               `json:"kind"`
	File              string               `json:"file"`
	Method            string               `json:"method"`
	Solver            string               `json:"solver"`
	Rank              int                  `json:"rank"`
	Sigma             float64              `json:"sigma"`
	Seed              uint64               `json:"seed"`
	Features          []string             `json:"features"`
	N                 int64                `json:"n,omitempty"`
	DomainNames       []string             `json:"domain_names,omitempty"`
	ClassNames        []string             `json:"class_names,omitempty"`
	Parts             int                  `json:"parts,omitempty"`
	Preprocessing     *preprocess.Pipeline `json:"preprocessing"`
	PreprocessingText string               `json:"preprocessing_text"`
}

// describePlanFile prints the summary of a statistics or plan file.
func describePlanFile(ctx context.Context, path, kind string, asJSON bool, stdout io.Writer) error {
	var (
		plan *dica.Plan
		r    = planReport{Kind: kind, File: path}
	)
	if kind == "stats" {
		st, err := dica.LoadStatsContext(ctx, path, dica.LoadOptions{})
		if err != nil {
			return err
		}
		plan = st.Plan()
		r.N, r.DomainNames, r.ClassNames, r.Parts = st.N(), st.Domains, st.Classes, len(st.Parts())
	} else {
		var err error
		if plan, err = dica.LoadPlanContext(ctx, path, dica.LoadOptions{}); err != nil {
			return err
		}
	}
	c := plan.Config
	r.Method, r.Solver, r.Rank, r.Seed = strings.ToLower(c.Method.String()), c.Solver.String(), c.Rank, c.Seed
	r.Sigma, _ = c.Bandwidths()
	r.Features = plan.Schema.Features
	r.Preprocessing, r.PreprocessingText = c.Preprocessing, c.Preprocessing.String()
	if asJSON {
		return printJSON(stdout, r)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	what := map[string]string{"stats": "statistics of one or more shards (dica merge makes a model of them)", "plan": "the plan of a fit (dica accumulate --plan uses it)"}[kind]
	fmt.Fprintf(tw, "file\t%s\n", what)
	if kind == "stats" {
		fmt.Fprintf(tw, "cells\t%d\t%d part(s)\n", r.N, r.Parts)
		fmt.Fprintf(tw, "samples\t%d\t%s\n", len(r.DomainNames), listNamesShort(r.DomainNames))
		if len(r.ClassNames) > 0 {
			fmt.Fprintf(tw, "populations\t%d\t%s\n", len(r.ClassNames), listNamesShort(r.ClassNames))
		}
	}
	fmt.Fprintf(tw, "markers\t%d\t%s\n", len(r.Features), strings.Join(r.Features, ","))
	fmt.Fprintf(tw, "method\t%s\tsolver %s, rank %d, seed %d\n", r.Method, r.Solver, r.Rank, r.Seed)
	fmt.Fprintf(tw, "sigma\t%.4g\n", r.Sigma)
	fmt.Fprintf(tw, "preprocessing\t%s\n", r.PreprocessingText)
	if err := tw.Flush(); err != nil {
		return outputError{err}
	}
	return nil
}

// tableReport describes a CSV, Parquet or AnnData file: its cells, its
// columns with their roles when dica wrote it, and the model that made it.
type tableReport struct {
	Kind          string               `json:"kind"`
	File          string               `json:"file"`
	Cells         int64                `json:"cells,omitempty"`
	Columns       []ingest.Column      `json:"columns"`
	WrittenBy     string               `json:"written_by,omitempty"`
	Provenance    map[string]string    `json:"provenance,omitempty"`
	Preprocessing *preprocess.Pipeline `json:"preprocessing,omitempty"`
}

// describeTable prints the summary of a CSV or Parquet file or an AnnData
// store.
func describeTable(path, kind string, asJSON bool, stdout io.Writer) error {
	r := tableReport{Kind: kind, File: path}
	in, err := ingest.Open([]string{path}, ingest.Options{})
	var layout *ingest.Layout
	if err == nil {
		layout = in.Layout
		if sz, ok := in.Source.(dataset.Sizer); ok {
			r.Cells = int64(sz.Len())
		}
	}
	switch kind {
	case "parquet":
		kv, kerr := parquetio.KeyValues(path)
		if kerr != nil {
			return kerr
		}
		r.Provenance = map[string]string{}
		for k, v := range kv {
			if strings.HasPrefix(k, "dica.") && k != ingest.MetadataLayout {
				r.Provenance[strings.TrimPrefix(k, "dica.")] = v
			}
		}
	case "zarr":
		uns, uerr := anndata.ReadDicaUns(path)
		if uerr != nil {
			return uerr
		}
		if len(uns) > 0 {
			r.Provenance = map[string]string{}
			for k, v := range uns {
				if k != "layout" && k != "preprocessing" {
					r.Provenance[k] = v
				}
			}
		}
	}
	if len(r.Provenance) == 0 {
		r.Provenance = nil
	}
	switch {
	case layout != nil:
		r.WrittenBy = "dica"
		r.Columns = layout.Columns
		r.Preprocessing = layout.Preprocessing
	case err == nil:
		for _, f := range in.Source.Schema().Features {
			r.Columns = append(r.Columns, ingest.Column{Name: f, Role: ingest.RoleChannel})
		}
	default:
		return err
	}
	if asJSON {
		return printJSON(stdout, r)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	what := map[string]string{"csv": "CSV", "parquet": "Parquet", "zarr": "AnnData store (Zarr)"}[kind]
	if r.WrittenBy != "" {
		what += ", written by dica"
	}
	fmt.Fprintf(tw, "file\t%s\n", what)
	if r.Cells > 0 {
		fmt.Fprintf(tw, "cells\t%d\n", r.Cells)
	}
	byRole := map[ingest.Role][]string{}
	var roles []ingest.Role
	for _, c := range r.Columns {
		if byRole[c.Role] == nil {
			roles = append(roles, c.Role)
		}
		byRole[c.Role] = append(byRole[c.Role], c.Name)
	}
	for _, role := range roles {
		fmt.Fprintf(tw, "%s\t%d\t%s\n", role, len(byRole[role]), listNamesShort(byRole[role]))
	}
	if r.Preprocessing != nil && (len(byRole[ingest.RoleInput]) > 0 || kind == "zarr") {
		fmt.Fprintf(tw, "inputs preprocessed\t%s\n", layout.Preprocessing.String())
	}
	keys := make([]string, 0, len(r.Provenance))
	for k := range r.Provenance {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		label := "model " + strings.ReplaceAll(k, "_", " ")
		if k == "model" {
			label = "model file"
		}
		fmt.Fprintf(tw, "%s\t%s\n", label, r.Provenance[k])
	}
	if err := tw.Flush(); err != nil {
		return outputError{err}
	}
	return nil
}

// listNamesShort lists names, the first 12 and how many more.
func listNamesShort(names []string) string {
	if len(names) <= 12 {
		return strings.Join(names, ",")
	}
	return fmt.Sprintf("%s, ... (%d more)", strings.Join(names[:12], ","), len(names)-12)
}

// printJSON prints v as one line of JSON.
func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return outputError{err}
	}
	if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
		return outputError{err}
	}
	return nil
}

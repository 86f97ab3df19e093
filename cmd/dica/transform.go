package main

import (
	"context"
	"io"
	"slices"
	"strings"

	"github.com/dicalab/dica/anndata"
	"github.com/dicalab/dica/dica"
	"github.com/dicalab/dica/output"
)

const transformUsage = `Usage: dica transform --model MODEL --data FILES --out OUT.csv|.fcs|.parquet|.zarr

Project cells with a fitted model. The model applies the preprocessing it
was fitted with (channels, --linearize, --compensate, --transform): give the
raw files, as for the fit; 'dica info MODEL' shows the preprocessing.

The output has, for each cell, where it came from (source: the file's
name without extension; event: its 1-based row or event number there, so
results join back to the files), its domain (the sample), its label when
the input has labels, every input channel as read (raw values), the
model's inputs after preprocessing with --write-transformed (NAME_t), and
the components, named after the method (DICA1..DICAk, UDICA1.., KPCA1..,
COIR1..). Samples and populations have the model's codes in every file
(natural order: sample2 before sample10); names the model does not know
follow. The format follows the --out extension:

  .csv      RFC 4180: source, event, domain, label, the channels, the
            components
  .fcs      FCS 3.1, float32, readable by FlowJo, FlowKit and flowCore: every
            input channel with its keywords, the components, then LABEL,
            DOMAIN, SOURCE and EVENT parameters whose codes the keywords
            DICA_LABELk, DICA_DOMAINk and DICA_SOURCEk name (DOMAIN 0 is a
            sample the model was not fitted on, named by DICA_DOMAIN0, so
            new patients written one by one share one code table); the
            source files' keywords are kept and DICA_* keywords record the
            model and the layout
  .parquet  the CSV's columns, typed, in row groups (pandas, Arrow, Spark);
            the footer records the model and each column's role
  .zarr     an AnnData store (Zarr v2) for scanpy: X the model's inputs as
            the model used them (var["preprocessing"] says how), obs_names
            "source:event" (sample1:10 is row 10 of sample1.csv), obs the
            domain and label, obsm["X_dica"] (X_udica, ...) the components,
            uns["dica"] the model and its preprocessing; open it with
            anndata.read_zarr (h5ad: convert it with
            anndata.read_zarr(...).write_h5ad(...))

Every output describes its columns, so dica reads it back as what it is
(dica fit --data out.parquet fits the raw channels, not the components).

Every output is streamed (memory does not grow with the cells) and written
to a temporary file (or folder) renamed over --out only when complete: an
error or an interruption leaves a previous --out as it was.

Examples:

  dica transform --model cytof.dica --data sample16.csv --labels labels16.csv \
      --out sample16_dica.csv
  dica transform --model gvhd.dica --data new.fcs --out new_dica.fcs

  # Data that is already preprocessed (columns named as the model's inputs):
  dica transform --model cytof.dica --data ready.csv --preprocess none --out z.csv

Preprocessing flags (--transform, --compensate, --linearize,
--transform-channels, --channels) are not needed; one that contradicts the
model is an error. Channels are matched by name: a file whose columns are
named otherwise than the model's channels is an error listing both
(--by-position takes them by position, with a warning); an FCS detector
that carries another marker than in the model's files is an error. A
model from a dica that did not record its preprocessing uses the flags as
given (the same as for the fit).

Centering (--center): train (the default) subtracts the training cells' mean
feature, so each cell is projected on its own and a new sample keeps its
shift; batch subtracts the mean of all the cells given, and domain the mean
of each file's (or --domain's) own cells, which removes a new sample's
overall shift (transductive, as the authors' dica.m does; one cell alone
projects to 0). Models fitted with --form paper default to batch, as dica.m.
--scale divides component j by sqrt(gamma_j) (dica.m's scaling).
` + dataHelp

// transformFlags are the flags of dica transform besides the data flags.
type transformFlags struct {
	model, out, center, preprocess string
	quiet, scale, writeTransformed bool
}

func runTransform(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("transform", transformUsage, stderr)
	var df dataFlags
	var tf transformFlags
	df.register(fs, true)
	df.registerModel(fs)
	fs.StringVar(&tf.model, "model", "", "model `file` written by dica fit")
	fs.StringVar(&tf.out, "out", "", "output `file`: .csv, .fcs, .parquet or a .zarr store; - for CSV on stdout")
	fs.BoolVar(&tf.quiet, "quiet", false, "no progress on stderr")
	fs.StringVar(&tf.center, "center", "", "`centering`: train, batch or domain (default: train; batch for --form paper models)")
	fs.BoolVar(&tf.scale, "scale", false, "divide component j by sqrt(gamma_j)")
	fs.StringVar(&tf.preprocess, "preprocess", "model", "`model`: apply the model's preprocessing; none: the data is already preprocessed")
	fs.BoolVar(&tf.writeTransformed, "write-transformed", false, "also write the model's inputs after preprocessing (columns NAME_t)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if tf.model == "" || tf.out == "" {
		return usageErr("--model and --out are required")
	}
	format, ferr := output.FormatOf(tf.out)
	if err := checkOut(format, tf.out, tf.model); err != nil {
		return err
	}
	if ferr != nil {
		return usageErr("--out %s", strings.TrimPrefix(ferr.Error(), "output: "))
	}
	m, err := loadModel(ctx, tf.model)
	if err != nil {
		return err
	}
	paper := m.Config().Solver == dica.Exact && m.Config().Form == dica.Paper
	center := output.CenterTrain
	switch {
	case tf.center != "":
		if center, err = output.ParseCenter(tf.center); err != nil {
			return usageErr("--center %q: want train, batch or domain", tf.center)
		}
	case paper:
		center = output.CenterBatch
	}
	if tf.scale && paper {
		return usageErr("--scale: a --form paper model's components are already scaled by 1/sqrt(gamma)")
	}
	df.markSet(fs)
	if err := df.fromModel(m, tf.preprocess, stderr); err != nil {
		return err
	}
	in, err := df.open(pos)
	if err != nil {
		return err
	}
	if err := checkOut(format, tf.out, slices.Concat(in.files, in.labels, []string{tf.model})...); err != nil {
		return err
	}
	warnInput(stderr, in)
	pr := newProgress(tf.quiet)
	defer pr.done()
	pr.setTotal(in.src)
	_, err = output.Write(ctx, in.Input, tf.out, stdout, output.Options{Model: m, ModelPath: tf.model, Center: center, Scale: tf.scale,
		Inputs: tf.writeTransformed, Progress: pr.update})
	return err
}

// checkOut refuses, before any work, an output that is one of the inputs
// or cannot be written (for an AnnData store: one inside an input, or an
// existing folder that is not a store).
func checkOut(format output.Format, out string, inputs ...string) error {
	if format == output.AnnData {
		if err := anndata.CheckOutput(out, inputs...); err != nil {
			return usageErr("%v", err)
		}
		return nil
	}
	return checkOutputs([]string{out}, inputs...)
}

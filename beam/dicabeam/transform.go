package dicabeam

import (
	"fmt"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"gonum.org/v1/gonum/mat"

	"github.com/dicalab/dica/dica"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*transformFn)(nil)).Elem())
}

// transformFn projects cells in blocks of BlockRows.
type transformFn struct {
	BlockRows int
	Scale     bool

	model *dica.Model
	d     int
	x     []float64
	cells []Cell
}

func (f *transformFn) StartBundle(_ func(**dica.Model) bool, _ func(Projection)) {
	f.x, f.cells = f.x[:0], f.cells[:0]
}

func (f *transformFn) ProcessElement(c Cell, modelSide func(**dica.Model) bool, emit func(Projection)) error {
	if f.model == nil {
		var m *dica.Model
		if !modelSide(&m) || m == nil {
			return fmt.Errorf("dicabeam: no model")
		}
		f.model = m
		f.d = len(m.Summary.Features)
	}
	if len(c.Features) != f.d {
		return fmt.Errorf("dicabeam: cell %d has %d features, the model %d", c.Key, len(c.Features), f.d)
	}
	f.x = append(f.x, c.Features...)
	f.cells = append(f.cells, c)
	if len(f.cells) >= f.BlockRows {
		return f.flush(emit)
	}
	return nil
}

func (f *transformFn) flush(emit func(Projection)) error {
	n := len(f.cells)
	if n == 0 {
		return nil
	}
	// The cells come preprocessed, as ReadFiles delivers them.
	z, err := f.model.Transform(mat.NewDense(n, f.d, f.x), dica.TransformOptions{Scale: f.Scale, Preprocessed: true})
	if err != nil {
		return err
	}
	_, k := z.Dims()
	for i, c := range f.cells {
		emit(Projection{Key: c.Key, Domain: c.Domain, Label: c.Label, Z: mat.Row(make([]float64, k), i, z)})
	}
	f.x, f.cells = f.x[:0], f.cells[:0]
	return nil
}

func (f *transformFn) FinishBundle(_ func(**dica.Model) bool, emit func(Projection)) error {
	return f.flush(emit)
}

// Transform adds the projection of cells by a model to the pipeline: model
// is a PCollection holding one *dica.Model (from Fit, or beam.Create of a
// loaded model), used as a side input; cells are projected in blocks of
// blockRows (dica.DefaultBlockRows when 0) with dica.Model.Transform, z(x) =
// W^T (phi(x) - mu), divided by sqrt(gamma_j) when scale is set. The cells
// must be preprocessed as the model's Preprocessing describes, as ReadFiles
// delivers them given the same FileOptions (Transform, Channels,
// Compensate): Transform does not apply the preprocessing again. The
// transductive BatchCenter option of the core is not available: a bundle is
// not a domain.
func Transform(s beam.Scope, model, cells beam.PCollection, blockRows int, scale bool) beam.PCollection {
	s = s.Scope("dica.Transform")
	if blockRows <= 0 {
		blockRows = dica.DefaultBlockRows
	}
	return beam.ParDo(s, &transformFn{BlockRows: blockRows, Scale: scale}, cells, beam.SideInput{Input: model})
}

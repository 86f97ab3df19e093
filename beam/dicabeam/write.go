package dicabeam

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local files

	"github.com/dicalab/dica/dica"
)

func init() {
	beam.RegisterType(reflect.TypeOf((*writeModelFn)(nil)).Elem())
	beam.RegisterFunction(FormatProjection)
}

type writeModelFn struct {
	Path string
}

func (f *writeModelFn) ProcessElement(ctx context.Context, m *dica.Model) error {
	if m == nil {
		return fmt.Errorf("dicabeam: no model to write")
	}
	b, err := m.MarshalBinary()
	if err != nil {
		return err
	}
	fs, err := filesystem.New(ctx, f.Path)
	if err != nil {
		return err
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, f.Path)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// WriteModel adds the writing of the model (a PCollection holding one
// *dica.Model) to path, in the core file format (dica.Load reads it). The
// path is opened with Beam's filesystem package: a local path, or gs://...
// when the program imports the gcs filesystem.
func WriteModel(s beam.Scope, path string, model beam.PCollection) {
	s = s.Scope("dica.WriteModel")
	beam.ParDo0(s, &writeModelFn{Path: path}, model)
}

// FormatProjection formats a projection as a CSV line: key, domain, label
// and the components.
func FormatProjection(p Projection) string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(p.Key, 10))
	b.WriteByte(',')
	b.WriteString(p.Domain)
	b.WriteByte(',')
	b.WriteString(p.Label)
	for _, z := range p.Z {
		b.WriteByte(',')
		b.WriteString(strconv.FormatFloat(z, 'g', -1, 64))
	}
	return b.String()
}

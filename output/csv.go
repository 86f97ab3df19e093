package output

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/dicalab/dica/internal/atomicfile"
)

// csvWriter writes CSV: the columns of the layout, a header row of their
// names.
type csvWriter struct {
	j       *job
	f       *atomicfile.File // nil on stdout
	bw      *bufio.Writer
	line    []byte
	fields  map[string][]byte // the CSV field of each name
	inputs  bool
	started bool
}

func newCSVWriter(j *job, path string, stdout io.Writer) (*csvWriter, error) {
	w := &csvWriter{j: j, fields: map[string][]byte{}, inputs: j.o.Inputs}
	out := stdout
	if path != "-" {
		f, err := atomicfile.Create(path)
		if err != nil {
			return nil, err
		}
		w.f, out = f, f
	}
	w.bw = bufio.NewWriterSize(out, 1<<20)
	head := make([]string, 0)
	for _, c := range j.layout().Columns {
		head = append(head, c.Name)
	}
	cw := csv.NewWriter(w.bw)
	if err := cw.Write(head); err != nil {
		return nil, err
	}
	cw.Flush()
	return w, cw.Error()
}

// field returns the CSV field of the name s, quoted as encoding/csv quotes
// it (RFC 4180).
func (w *csvWriter) field(s string) []byte {
	if f, ok := w.fields[s]; ok {
		return f
	}
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	cw.Write([]string{s})
	cw.Flush()
	f := []byte(strings.TrimSuffix(b.String(), "\n"))
	w.fields[s] = f
	return f
}

func (w *csvWriter) write(c *cells) error {
	j := w.j
	for i := 0; i < c.n; i++ {
		src, ev := j.source(c, i)
		line := append(w.line[:0], w.field(src)...)
		line = append(line, ',')
		line = strconv.AppendInt(line, ev, 10)
		line = append(line, ',')
		line = append(line, w.field(j.doms.names[c.dom[i]])...)
		if c.lab != nil {
			line = append(line, ',')
			if l := c.lab[i]; l >= 0 {
				line = append(line, w.field(j.cls.names[l])...)
			}
		}
		for _, v := range c.raw[i*c.rawD : (i+1)*c.rawD] {
			line = append(line, ',')
			line = strconv.AppendFloat(line, v, 'g', -1, 64)
		}
		if w.inputs {
			for _, v := range c.b.Row(i) {
				line = append(line, ',')
				line = strconv.AppendFloat(line, v, 'g', -1, 64)
			}
		}
		for _, v := range c.z.RawRowView(i) {
			line = append(line, ',')
			line = strconv.AppendFloat(line, v, 'g', 10, 64)
		}
		for _, v := range c.vals[i*c.nt : (i+1)*c.nt] {
			line = append(line, ',')
			line = strconv.AppendFloat(line, v, 'g', -1, 64)
		}
		if c.pred != nil {
			line = append(line, ',')
			line = append(line, w.field(c.predNames[c.pred[i]])...)
			line = append(line, ',')
			line = strconv.AppendFloat(line, c.conf[i], 'g', 6, 64)
		}
		line = append(line, '\n')
		if _, err := w.bw.Write(line); err != nil {
			return err
		}
		w.line = line
	}
	return nil
}

func (w *csvWriter) commit() error {
	if err := w.bw.Flush(); err != nil {
		return err
	}
	if w.f != nil {
		return w.f.Commit()
	}
	return nil
}

func (w *csvWriter) abort() {
	if w.f != nil {
		w.f.Abort()
	}
}

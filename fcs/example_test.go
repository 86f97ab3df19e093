package fcs_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math"
	"os"

	"github.com/dicalab/dica/fcs"
	"github.com/dicalab/dica/preprocess"
	"gonum.org/v1/gonum/mat"
)

// Example writes a small FCS 3.1 file and reads it back in blocks.
func Example() {
	events := mat.NewDense(3, 2, []float64{
		100, 5,
		200, 50,
		300, 500,
	})
	var buf bytes.Buffer
	err := fcs.Write(&buf, &fcs.DataSet{
		Params:   []fcs.Param{{Name: "FSC-A"}, {Name: "FL1-A", Label: "CD3"}},
		Events:   events,
		Keywords: []fcs.Keyword{{Key: "$CYT", Value: "example"}},
	})
	if err != nil {
		log.Fatal(err)
	}

	f, err := fcs.Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		log.Fatal(err)
	}
	cyt, _ := f.Keyword("$cyt")
	fmt.Println(f.Version(), string(f.DataType()), f.NumEvents(), "events of", f.Names(), "from", cyt)

	r, err := f.Events(fcs.EventOptions{})
	if err != nil {
		log.Fatal(err)
	}
	asinh := preprocess.Channels{F: preprocess.Asinh{Cofactor: 5}, Cols: []int{1}}
	block := make([]float64, 2*2) // two events at a time
	for {
		n, err := r.Read(block, 2)
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		asinh.Apply(block[:2*n], 2)
		for i := 0; i < n; i++ {
			fmt.Printf("%.4g\n", block[2*i:2*i+2])
		}
	}
	// Output:
	// FCS3.1 F 3 events of [FSC-A FL1-A] from example
	// [100 0.8814]
	// [200 2.998]
	// [300 5.298]
}

func ExampleInfo_WriteText() {
	var buf bytes.Buffer
	err := fcs.Write(&buf, &fcs.DataSet{
		DataType: 'I',
		Params:   []fcs.Param{{Name: "FSC-H", Bits: 16, Range: 1024}, {Name: "FL2-H", Label: "CD8", Bits: 16, Range: 1024}},
		Events:   mat.NewDense(2, 2, []float64{10, 20, 1000, 1023}),
	})
	if err != nil {
		log.Fatal(err)
	}
	f, err := fcs.Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		log.Fatal(err)
	}
	in, err := f.Info()
	if err != nil {
		log.Fatal(err)
	}
	in.WriteText(os.Stdout)
	// Output:
	// version     FCS3.1
	// datatype    I
	// byteorder   1,2,3,4
	// events      2
	// parameters  2
	// spillover   none
	// #  name   label  bits  range  first  last
	// 1  FSC-H  -      16    1024   10     1000
	// 2  FL2-H  CD8    16    1024   20     1023
}

// Non-finite event values, which JSON cannot hold, are written as null.
func ExampleValues_MarshalJSON() {
	b, err := json.Marshal(fcs.Values{1.5, math.NaN(), math.Inf(1), -2})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(b))
	// Output: [1.5,null,null,-2]
}

// Two parameters share the $PnN "CD3": they are listed as CD3#2 and CD3#3,
// and the bare name, which could mean either, is refused.
func ExampleFile_LookupParam() {
	var buf bytes.Buffer
	err := fcs.Write(&buf, &fcs.DataSet{
		Params: []fcs.Param{{Name: "FSC-A"}, {Name: "CD3"}, {Name: "CD3"}},
		Events: mat.NewDense(1, 3, []float64{1, 2, 3}),
	})
	if err != nil {
		log.Fatal(err)
	}
	f, err := fcs.Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Names())
	fmt.Println(f.Warnings()[0])
	_, err = f.LookupParam("CD3")
	fmt.Println(err)
	j, _ := f.LookupParam("CD3#3")
	fmt.Println(j)
	// Output:
	// [FSC-A CD3#2 CD3#3]
	// parameters 2 and 3 have the same $PnN "CD3": they are named "CD3#2" and "CD3#3"
	// fcs: channel "CD3" names parameters 2 and 3: use "CD3#2" or "CD3#3"
	// 2
}

// A channel carried from an integer file to a float output: $PnE becomes
// 0,0, $PnR follows the largest value, and negative values get a linear
// display range.
func ExampleParam_ForFloat() {
	in := fcs.Param{Name: "FL1-A", Label: "CD3", Bits: 16, Range: 1024, Keywords: []fcs.Keyword{{Key: "$PnV", Value: "450"}}}
	out, err := in.ForFloat(-35.5, 1020.25)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s bits %d range %g $PnE %g,%g %v\n", out.Name, out.Bits, out.Range, out.Decades, out.Offset, out.Keywords)
	// Output: FL1-A bits 0 range 1021 $PnE 0,0 [{$PnV 450} {$PnD Linear,-35.5,1020.25}]
}

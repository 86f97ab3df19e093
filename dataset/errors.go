package dataset

import "fmt"

// OptionError is an error in one field of a reader's options: Pkg names
// the package ("csvio", "fcs", "ingest", ...), Option the field
// ("Channels", "LabelsIgnore", ...), Value holds the value at fault, and
// Err says what is wrong. A program maps Option to its own flag or
// setting when it reports the error.
type OptionError struct {
	Pkg    string
	Option string
	Value  any
	Err    error
}

func (e *OptionError) Error() string {
	if e == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s: %s: %v", e.Pkg, e.Option, e.Err)
}

// Unwrap returns Err.
func (e *OptionError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

package engine

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
)

// FaultError is one problem of the faults a simulator is given (ParseFaults): a fault name it
// does not know (Name), or a fault parameter it cannot apply (Param, as given:
// "name.key=value"). A caller that took them from flags names the flag with the value.
type FaultError struct {
	// Name is the fault named, for an unknown fault; "" for a parameter's problem.
	Name string
	// Param is the parameter given, for a parameter's problem; "" for a fault's.
	Param string
	// Err says what is wrong and what is allowed.
	Err error
}

// Error names the fault or the parameter and says what is wrong.
func (e *FaultError) Error() string {
	if e.Param != "" {
		return fmt.Sprintf("fault parameter %q: %v", e.Param, e.Err)
	}
	return fmt.Sprintf("fault %q: %v", e.Name, e.Err)
}

// Unwrap returns Err.
func (e *FaultError) Unwrap() error { return e.Err }

// setParam applies one fault parameter, "name.key=value" or, when exactly one fault is set,
// "key=value", by decoding value onto the fault's field tagged key. The error is a
// *FaultError.
func (f *Faults) setParam(p string, byName map[string]Fault) error {
	bad := func(err error) error { return &FaultError{Param: p, Err: err} }
	kv, value, ok := strings.Cut(p, "=")
	if !ok {
		return bad(errors.New("want name.key=value"))
	}
	name, key, dotted := strings.Cut(kv, ".")
	if !dotted {
		key = kv
		if len(f.list) != 1 {
			return bad(fmt.Errorf("name the fault (name.key=value) when %d faults are set", len(f.list)))
		}
		name = f.list[0].Name()
	}
	flt, ok := byName[name]
	if !ok {
		return bad(fmt.Errorf("fault %q is not among the faults set", name))
	}
	if err := decodeParam(flt, key, value); err != nil {
		return bad(err)
	}
	return nil
}

// param is one tagged field of a fault struct.
type param struct {
	key   string
	field reflect.StructField
}

// params lists a fault's parameters: its exported fields with a mapstructure tag, in
// declaration order.
func params(flt Fault) []param {
	t := reflect.TypeOf(flt)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	var ps []param
	for i := range t.NumField() {
		sf := t.Field(i)
		if key, _, _ := strings.Cut(sf.Tag.Get("mapstructure"), ","); key != "" && key != "-" && sf.IsExported() {
			ps = append(ps, param{key: key, field: sf})
		}
	}
	return ps
}

// decodeParam sets the parameter key of flt from its text form: numbers and integers as Go
// parses them, durations in Go syntax.
func decodeParam(flt Fault, key, value string) error {
	ps := params(flt)
	var p *param
	keys := make([]string, len(ps))
	for i := range ps {
		keys[i] = ps[i].key
		if ps[i].key == key {
			p = &ps[i]
		}
	}
	switch {
	case len(ps) == 0:
		return fmt.Errorf("unknown parameter %q: fault %s takes none", key, flt.Name())
	case p == nil:
		return fmt.Errorf("unknown parameter %q: fault %s takes %s", key, flt.Name(), strings.Join(keys, ", "))
	}
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result:           flt,
		WeaklyTypedInput: true,
		DecodeHook:       mapstructure.StringToTimeDurationHookFunc(),
		ErrorUnused:      true,
	})
	if err != nil {
		return err // flt is not a pointer to a struct: a fault without parameters
	}
	if err := dec.Decode(map[string]any{key: value}); err != nil {
		return fmt.Errorf("%s: %q is not allowed: want %s", key, value, kindOf(p.field.Type))
	}
	return nil
}

// kindOf says what text a parameter of type t takes.
func kindOf(t reflect.Type) string {
	switch {
	case t == reflect.TypeOf(time.Duration(0)):
		return "a duration in Go syntax, like 60s"
	case t.Kind() == reflect.Float64:
		return "a number"
	case t.Kind() == reflect.Int:
		return "an integer"
	}
	return "a " + t.String()
}

// describe renders a fault and its parameters as name{key=value …}, in declaration order.
func describe(flt Fault) string {
	ps := params(flt)
	v := reflect.Indirect(reflect.ValueOf(flt))
	parts := make([]string, len(ps))
	for i, p := range ps {
		var s string
		switch x := v.FieldByIndex(p.field.Index).Interface().(type) {
		case float64:
			s = fmt.Sprintf("%g", x)
		default:
			s = fmt.Sprint(x)
		}
		parts[i] = p.key + "=" + s
	}
	return flt.Name() + "{" + strings.Join(parts, " ") + "}"
}

// problems collects a Validate's findings, each naming the key, the value and what is allowed.
type problems []error

// fraction checks that v is a finite number from 0 to 1.
func (ps *problems) fraction(key string, v float64) {
	if !(v >= 0 && v <= 1) {
		*ps = append(*ps, fmt.Errorf("%s: %g is not allowed: want a fraction from 0 to 1", key, v))
	}
}

// between checks that v is a finite number from lo to hi.
func (ps *problems) between(key string, v, lo, hi float64) {
	if math.IsNaN(v) || v < lo || v > hi {
		*ps = append(*ps, fmt.Errorf("%s: %g is not allowed: want a number from %g to %g", key, v, lo, hi))
	}
}

// finite checks that v is a finite number ≥ 0.
func (ps *problems) finite(key string, v float64) {
	if !(v >= 0 && v <= math.MaxFloat64) {
		*ps = append(*ps, fmt.Errorf("%s: %g is not allowed: want a finite number ≥ 0", key, v))
	}
}

// atLeast checks that the integer v is at least lo.
func (ps *problems) atLeast(key string, v, lo int) {
	if v < lo {
		*ps = append(*ps, fmt.Errorf("%s: %d is not allowed: want an integer ≥ %d", key, v, lo))
	}
}

// positive checks that the duration d is above 0.
func (ps *problems) positive(key string, d time.Duration) {
	if d <= 0 {
		*ps = append(*ps, fmt.Errorf("%s: %s is not allowed: want a duration > 0", key, d))
	}
}

// nonNegative checks that the duration d is at least 0.
func (ps *problems) nonNegative(key string, d time.Duration) {
	if d < 0 {
		*ps = append(*ps, fmt.Errorf("%s: %s is not allowed: want a duration ≥ 0", key, d))
	}
}

// oneOf checks that v is one of allowed.
func (ps *problems) oneOf(key, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	*ps = append(*ps, fmt.Errorf("%s: %q is not allowed: want %s", key, v, strings.Join(allowed, ", ")))
}

// err returns the problems joined, or nil.
func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return errors.Join(ps...)
}

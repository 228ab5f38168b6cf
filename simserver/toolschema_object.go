package simserver

import (
	"fmt"
	"slices"
)

// compileObject reads the object keywords: properties (in their order), required,
// additionalProperties, patternProperties, propertyNames, the counts, and dependentRequired /
// dependentSchemas with their draft 7 spelling, dependencies.
func (c *schemaCompiler) compileObject(n *schemaNode, s jsonObject, path string) error {
	if v, ok := s.get("properties"); ok {
		props, ok := v.(jsonObject)
		if !ok {
			return &schemaError{path, "properties must be an object of schemas"}
		}
		for _, m := range props {
			node, err := c.compile(m.val, path+".properties."+m.key)
			if err != nil {
				return err
			}
			n.props = append(n.props, schemaProp{m.key, node})
		}
	}
	if v, ok := s.get("required"); ok {
		names, ok := stringList(v)
		if !ok {
			return &schemaError{path, "required must be an array of property names"}
		}
		n.required = names
	}
	var err error
	if n.additional, err = c.optional(s, "additionalProperties", path); err != nil {
		return err
	}
	if n.propertyNames, err = c.optional(s, "propertyNames", path); err != nil {
		return err
	}
	if err := c.compilePatternProps(n, s, path); err != nil {
		return err
	}
	if err := c.compileDependents(n, s, path); err != nil {
		return err
	}
	if n.minProps, err = count(s, "minProperties", 0, path); err != nil {
		return err
	}
	if n.maxProps, err = count(s, "maxProperties", -1, path); err != nil {
		return err
	}
	if n.maxProps >= 0 && n.maxProps < n.minProps {
		return &schemaError{path, fmt.Sprintf("maxProperties %d is below minProperties %d", n.maxProps, n.minProps)}
	}
	return n.checkRequired()
}

// checkRequired refuses a required property that no value may have.
func (n *schemaNode) checkRequired() error {
	for _, name := range n.required {
		node := n.propSchema(name)
		if node != nil && node.never {
			reason := "its schema is false"
			if n.prop(name) == nil {
				reason = "additionalProperties: false forbids it"
			}
			return &schemaError{n.path, fmt.Sprintf("required names %q, but %s", name, reason)}
		}
	}
	return nil
}

// prop returns the properties entry for name, or nil.
func (n *schemaNode) prop(name string) *schemaNode {
	for _, p := range n.props {
		if p.name == name {
			return p.node
		}
	}
	return nil
}

// propSchema returns the schema a member name's value must satisfy beside patternProperties:
// its properties entry, or additionalProperties when no properties or patternProperties entry
// names it; nil means any value.
func (n *schemaNode) propSchema(name string) *schemaNode {
	if p := n.prop(name); p != nil {
		return p
	}
	for _, pp := range n.patternProps {
		if pp.re.MatchString(name) {
			return nil
		}
	}
	return n.additional
}

// compilePatternProps reads patternProperties.
func (c *schemaCompiler) compilePatternProps(n *schemaNode, s jsonObject, path string) error {
	v, ok := s.get("patternProperties")
	if !ok {
		return nil
	}
	pats, ok := v.(jsonObject)
	if !ok {
		return &schemaError{path, "patternProperties must be an object of schemas"}
	}
	for _, m := range pats {
		re, _, err := compilePattern(m.key)
		if err != nil {
			return &schemaError{path, fmt.Sprintf("patternProperties %q is not a regular expression the simulator can read: %v", m.key, err)}
		}
		node, err := c.compile(m.val, path+".patternProperties."+m.key)
		if err != nil {
			return err
		}
		n.patternProps = append(n.patternProps, patternProp{re, node})
	}
	return nil
}

// compileDependents reads dependentRequired, dependentSchemas and dependencies.
func (c *schemaCompiler) compileDependents(n *schemaNode, s jsonObject, path string) error {
	for _, key := range []string{"dependentRequired", "dependentSchemas", "dependencies"} {
		v, ok := s.get(key)
		if !ok {
			continue
		}
		deps, ok := v.(jsonObject)
		if !ok {
			return &schemaError{path, key + " must be an object"}
		}
		for _, m := range deps {
			if names, ok := stringList(m.val); ok && key != "dependentSchemas" {
				n.dependentRequired = append(n.dependentRequired, dependent{prop: m.key, names: names})
				continue
			}
			if key == "dependentRequired" {
				return &schemaError{path, fmt.Sprintf("dependentRequired.%s must be an array of property names", m.key)}
			}
			node, err := c.compile(m.val, path+"."+key+"."+m.key)
			if err != nil {
				return err
			}
			n.dependentSchemas = append(n.dependentSchemas, dependent{prop: m.key, node: node})
		}
	}
	return nil
}

// stringList returns a JSON array of strings as a slice.
func stringList(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, true
}

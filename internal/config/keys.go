package config

import "reflect"

// KeyPaths returns every key that an OPSGATE_<SECTION>_<KEY> variable can
// set (EnvName), as section.key ("llm.base_url"), or the section alone for
// a section that is a list (schedules). It walks the same fields as the
// environment overrides, so the two cannot disagree.
func KeyPaths() []string {
	var out []string
	root := reflect.TypeOf(Config{})
	for i := range root.NumField() {
		section := tagName(root.Field(i))
		if section == "" {
			continue
		}
		st := root.Field(i).Type
		if st.Kind() != reflect.Struct {
			out = append(out, section)
			continue
		}
		for j := range st.NumField() {
			if key := tagName(st.Field(j)); key != "" {
				out = append(out, section+"."+key)
			}
		}
	}
	return out
}

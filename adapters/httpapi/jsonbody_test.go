package httpapi

import "testing"

func TestDuplicateKey(t *testing.T) {
	for _, tc := range []struct {
		body string
		dup  bool
	}{
		{`{"text":"hi"}`, false},
		{`{"a":{"k":1},"b":{"k":1},"k":[{"k":1},{"k":2}]}`, false},
		{`[{"a":1},{"a":2}]`, false},
		{`{"a":"k","k":"a"}`, false},
		{`{"text":"hi","text":"hi"}`, true},
		{`{"text":"hi","t\u0065xt":"ho"}`, true},
		{`{"a":{"b":{"c":1,"c":1}}}`, true},
		{`{"a":[1,{"b":[{"c":1,"d":2,"c":3}]}]}`, true},
		{`{"a":{},"a":{}}`, true},
	} {
		err := duplicateKey([]byte(tc.body))
		if (err != nil) != tc.dup {
			t.Errorf("duplicateKey(%s) = %v, want a duplicate: %t", tc.body, err, tc.dup)
		}
	}
}

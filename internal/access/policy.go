package access

import (
	"encoding/json"
	"fmt"
	"strings"
)

// PolicyDocument is an access policy in the spirit of IAM's
// identity-based policies: statements that allow or deny actions on
// resources. Stored as JSON with IAM's member names.
type PolicyDocument struct {
	Statement []Statement `json:"Statement" yaml:"statements"`
}

// Statement allows or denies Actions ("batch:SubmitServiceJob",
// "batch:Describe*", "*") on Resources (ARNs, "*"), both with the globs
// * (any run of characters) and ? (one character). Actions match without
// regard to case, as IAM's do; resources match exactly.
type Statement struct {
	Effect   string   `json:"Effect" yaml:"effect"` // Allow or Deny
	Action   []string `json:"Action" yaml:"actions"`
	Resource []string `json:"Resource" yaml:"resources"`
}

// Effects.
const (
	EffectAllow = "Allow"
	EffectDeny  = "Deny"
)

// Validate checks a document the way IAM would refuse one.
func (d PolicyDocument) Validate() error {
	if len(d.Statement) == 0 {
		return fmt.Errorf("a policy needs at least one statement")
	}
	for i, s := range d.Statement {
		switch {
		case s.Effect != EffectAllow && s.Effect != EffectDeny:
			return fmt.Errorf("statement %d: effect must be Allow or Deny, not %q", i+1, s.Effect)
		case len(s.Action) == 0:
			return fmt.Errorf("statement %d: needs at least one action", i+1)
		case len(s.Resource) == 0:
			return fmt.Errorf("statement %d: needs at least one resource", i+1)
		}
		for _, a := range s.Action {
			if a != "*" && !strings.Contains(a, ":") {
				return fmt.Errorf("statement %d: action %q: want service:Action (batch:SubmitServiceJob) or *", i+1, a)
			}
		}
	}
	return nil
}

// ParsePolicy reads and validates a document stored as JSON.
func ParsePolicy(b []byte) (PolicyDocument, error) {
	var d PolicyDocument
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("policy document: %w", err)
	}
	return d, d.Validate()
}

// decision is what a set of statements says about one request.
type decision int

const (
	implicitDeny decision = iota // no statement matches
	allowed
	explicitDeny
)

// decide evaluates statements as IAM does: an explicit Deny wins over any
// Allow; without either the request is denied.
func decide(docs []PolicyDocument, action, resource string) decision {
	d := implicitDeny
	for _, doc := range docs {
		for _, s := range doc.Statement {
			if !anyGlob(s.Action, action, true) || !anyGlob(s.Resource, resource, false) {
				continue
			}
			if s.Effect == EffectDeny {
				return explicitDeny
			}
			d = allowed
		}
	}
	return d
}

func anyGlob(patterns []string, s string, fold bool) bool {
	for _, p := range patterns {
		if fold {
			p, s = strings.ToLower(p), strings.ToLower(s)
		}
		if glob(p, s) {
			return true
		}
	}
	return false
}

// glob matches s against p, where * is any run of characters and ? any
// one. It backtracks only to the last *, so it is linear in practice.
func glob(p, s string) bool {
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi++
			si++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// Built-in policies a key may be given by name, as AWS's managed
// policies; their names cannot be stored.
var builtinPolicies = map[string]PolicyDocument{
	"AdministratorAccess": {Statement: []Statement{{Effect: EffectAllow, Action: []string{"*"}, Resource: []string{"*"}}}},
	"ReadOnlyAccess": {Statement: []Statement{{Effect: EffectAllow,
		Action: []string{"batch:Describe*", "batch:List*", "batch:Get*", "sharq:Get*",
			"sagemaker:Describe*", "sagemaker:List*", "logs:Describe*", "logs:Get*", "s3:Get*", "s3:List*"},
		Resource: []string{"*"}}}},
}

// IsBuiltinPolicy tells whether name is a built-in policy's.
func IsBuiltinPolicy(name string) bool {
	_, ok := builtinPolicies[name]
	return ok
}

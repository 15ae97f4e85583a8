package clusterconfig

import (
	"errors"
	"fmt"

	"github.com/sharq-dev/sharq/internal/access"
)

// AccessPolicy is a named access policy that access keys are given by
// name (sharq admin keys create --policy NAME). Example:
//
//	accessPolicies:
//	  - name: team-a
//	    statements:
//	      - effect: Allow
//	        actions: [batch:SubmitServiceJob, batch:UpdateServiceJob, batch:TerminateServiceJob]
//	        resources: ["arn:aws:batch:*:*:job-queue/jq/quota-share/QS1", "arn:aws:batch:*:*:service-job/*"]
//	      - effect: Allow
//	        actions: ["batch:Describe*", "batch:List*", "batch:Get*", "sharq:Get*"]
//	        resources: ["*"]
type AccessPolicy struct {
	Name       string             `yaml:"name" json:"name"`
	Statements []access.Statement `yaml:"statements" json:"statements"`
}

// ErrReserved is the name of a built-in policy used for one of the file's.
var ErrReserved = errors.New("is the name of a built-in policy")

// Document is the policy as the server stores it.
func (p AccessPolicy) Document() access.PolicyDocument {
	return access.PolicyDocument{Statement: p.Statements}
}

func (c *Config) validateAccessPolicies() error {
	seen := map[string]bool{}
	for i, p := range c.AccessPolicies {
		f := fmt.Sprintf("accessPolicies[%d]", i)
		if err := unique(f+".name", p.Name, seen); err != nil {
			return err
		}
		if !access.ValidPolicyName(p.Name) {
			return fieldErr(f+".name", ErrEnum, "%q: want 1 to 128 letters, digits or +=,.@_-", p.Name)
		}
		if access.IsBuiltinPolicy(p.Name) {
			return fieldErr(f+".name", ErrReserved, "%q", p.Name)
		}
		if err := p.Document().Validate(); err != nil {
			return fieldErr(f+".statements", ErrEnum, "%v", err)
		}
	}
	return nil
}

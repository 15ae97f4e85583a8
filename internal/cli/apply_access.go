package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"

	"github.com/sharq-dev/sharq/internal/access"
	"github.com/sharq-dev/sharq/internal/clusterconfig"
	"github.com/sharq-dev/sharq/internal/sharqapi"
)

// accessPolicies plans the file's access policies: each one the server
// lacks, or holds with other statements, is put whole.
func (p *planner) accessPolicies(ctx context.Context, want []clusterconfig.AccessPolicy) error {
	if len(want) == 0 {
		return nil
	}
	var have []sharqapi.AccessPolicy
	if err := p.c.getJSON(ctx, sharqapi.PoliciesPath, nil, &have); err != nil {
		return fmt.Errorf("list access policies: %w", err)
	}
	cur := map[string]access.PolicyDocument{}
	for _, h := range have {
		cur[h.Name] = h.Document
	}
	for _, pol := range want {
		doc := pol.Document()
		old, ok := cur[pol.Name]
		action := "create"
		if ok {
			if reflect.DeepEqual(old, doc) {
				continue
			}
			action = "update"
		}
		detail := fmt.Sprintf("%d statements", len(doc.Statement))
		p.add(action, "access policy", pol.Name, []string{detail}, func(ctx context.Context) error {
			return p.c.putPolicy(ctx, pol.Name, doc)
		})
	}
	return nil
}

func (c *client) putPolicy(ctx context.Context, name string, doc access.PolicyDocument) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.base+sharqapi.PoliciesPath+"/"+name, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

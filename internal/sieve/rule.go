package sieve

import (
	"encoding/json"
	"fmt"
)

// Rule mirrors the catalog's Rule type (catalog/rules.yaml) field for field, with the same
// JSON names, until the generator emits generated.Rule. Rules converts the generated rules (or
// anything with those JSON names) into it, so that switching is one line for a caller.
type Rule struct {
	Name    string       `json:"name"`
	Account string       `json:"account,omitempty"`
	Match   RuleMatch    `json:"match"`
	Actions []RuleAction `json:"actions"`
	Stop    bool         `json:"stop,omitempty"`
	State   string       `json:"state,omitempty"`
}

// RuleCondition is a set of conditions that all hold.
type RuleCondition struct {
	From          string       `json:"from,omitempty"`
	To            string       `json:"to,omitempty"`
	Cc            string       `json:"cc,omitempty"`
	Subject       string       `json:"subject,omitempty"`
	FromDomain    string       `json:"from_domain,omitempty"`
	ToDomain      string       `json:"to_domain,omitempty"`
	List          *bool        `json:"list,omitempty"`
	HasAttachment *bool        `json:"has_attachment,omitempty"`
	Larger        int64        `json:"larger,omitempty"`
	Smaller       int64        `json:"smaller,omitempty"`
	OlderThan     string       `json:"older_than,omitempty"`
	YoungerThan   string       `json:"younger_than,omitempty"`
	Flags         []string     `json:"flags,omitempty"`
	Header        []RuleHeader `json:"header,omitempty"`
	Body          []string     `json:"body,omitempty"`
	Authenticated *bool        `json:"authenticated,omitempty"`
}

// RuleMatch is a rule's conditions and its groups.
type RuleMatch struct {
	RuleCondition
	Any  []RuleCondition `json:"any,omitempty"`
	All  []RuleCondition `json:"all,omitempty"`
	None []RuleCondition `json:"none,omitempty"`
}

// RuleHeader is a header condition.
type RuleHeader struct {
	Name     string `json:"name"`
	Contains string `json:"contains"`
}

// RuleAction is one thing a rule does.
type RuleAction struct {
	Do     string `json:"do"`
	Folder string `json:"folder,omitempty"`
	To     string `json:"to,omitempty"`
}

// StateEnabled is the state of a rule that runs.
const StateEnabled = "enabled"

// Rules converts rules of another type with the catalog's JSON names (a []generated.Rule) by
// way of JSON.
func Rules(v any) ([]Rule, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("the rules cannot be read for Sieve: %w", err)
	}
	var out []Rule
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("the rules cannot be read for Sieve: %w", err)
	}
	return out, nil
}

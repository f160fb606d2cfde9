package mask

// Rules numbers what the masks hide. Bump it with any change that makes them hide more or
// otherwise: a store remembers the Rules its text was masked under, and masks what it holds
// again (its messages, notes and contact search words) when it is opened by a postern whose
// Rules differ, so that no search column keeps what the new rules would hide.
// TestRules fails when the masks' output over internal/testing/masktest changes while Rules
// stays the same.
const Rules = 2

//go:build !conformmutants

package services

// mutant reports whether the planted defect name is switched on. In every
// build but the conformance kit's mutation test (build tag conformmutants,
// mutants_on.go) it is the constant false, and the compiler drops the hooks.
func mutant(string) bool { return false }

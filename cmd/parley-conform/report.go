package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"sort"
	"strings"
)

// result is one check's outcome over one binding.
type result struct {
	Section  string `json:"section"`
	Name     string `json:"name"`
	Ref      string `json:"ref"`
	Binding  string `json:"binding"`
	Pass     bool   `json:"pass"`
	Skipped  bool   `json:"skipped,omitempty"`
	Evidence string `json:"evidence,omitempty"`
}

func printLine(r result) {
	status := "pass"
	switch {
	case r.Skipped:
		status = "skip"
	case !r.Pass:
		status = "FAIL"
	}
	line := fmt.Sprintf("%-4s  %-10s  %-9s  %s (%s)", status, r.Section, r.Binding, r.Name, r.Ref)
	if status != "pass" && r.Evidence != "" {
		line += " — " + strings.ReplaceAll(r.Evidence, "\n", " ")
	}
	fmt.Println(line)
}

type tally struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

func summarize(results []result) (map[string]*tally, []string) {
	sums := map[string]*tally{}
	for _, r := range results {
		key := r.Section
		if isProfile(key) {
			key = "profile " + key
		}
		t := sums[key]
		if t == nil {
			t = &tally{}
			sums[key] = t
		}
		switch {
		case r.Skipped:
			t.Skipped++
		case r.Pass:
			t.Passed++
		default:
			t.Failed++
		}
	}
	keys := make([]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return sums, keys
}

func report(o options, results []result) error {
	sums, keys := summarize(results)
	failed := 0
	for _, t := range sums {
		failed += t.Failed
	}
	if o.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"checks": results, "summary": sums, "pass": failed == 0, "url": o.url}); err != nil {
			return err
		}
	} else {
		fmt.Println()
		for _, k := range keys {
			t := sums[k]
			fmt.Printf("%-20s %3d passed, %d failed, %d skipped\n", k, t.Passed, t.Failed, t.Skipped)
		}
		if failed == 0 {
			fmt.Println("conforms: every check passed")
		} else {
			fmt.Printf("does not conform: %d checks failed\n", failed)
		}
	}
	if o.junit != "" {
		return writeJUnit(o.junit, results, keys)
	}
	return nil
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
}

func writeJUnit(file string, results []result, keys []string) error {
	bySection := map[string]*junitSuite{}
	var out junitSuites
	for _, r := range results {
		key := r.Section
		if isProfile(key) {
			key = "profile " + key
		}
		s := bySection[key]
		if s == nil {
			s = &junitSuite{Name: key}
			bySection[key] = s
		}
		c := junitCase{Name: fmt.Sprintf("[%s] %s (%s)", r.Binding, r.Name, r.Ref), Classname: "parley-conform." + r.Section}
		s.Tests++
		switch {
		case r.Skipped:
			s.Skipped++
			c.Skipped = &junitMessage{Message: r.Evidence}
		case !r.Pass:
			s.Failures++
			c.Failure = &junitMessage{Message: r.Evidence}
		}
		s.Cases = append(s.Cases, c)
	}
	for _, k := range keys {
		out.Suites = append(out.Suites, *bySection[k])
	}
	b, err := xml.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append([]byte(xml.Header), b...), 0o644)
}

package checker

// attempts counts the moves of job that charged an attempt by the spec's
// attempt rule (sut.Spec.ChargesAttempt): what the stored attempts must
// equal, and what a retry cap is reached by.
func (c *run) attempts(job string) int {
	n := 0
	for _, s := range c.jobStates[job] {
		if c.in.System.ChargesAttempt(s.From, s.To) {
			n++
		}
	}
	return n
}

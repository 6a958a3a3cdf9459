package common

// MaxLineBytes is maxLineBytes, for the tests of package common_test.
const MaxLineBytes = maxLineBytes

// Parts are the plain and styled text of l.
func (l Line) Parts() (plain, styled string) { return l.plain, l.styled }

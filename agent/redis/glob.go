package redis

// Match reports whether s matches the Redis glob pattern p, as KEYS, SCAN
// MATCH and PSUBSCRIBE read it: '*' any run of bytes ('/' among them), '?'
// one byte, "[abc]", "[^abc]" and "[a-z]" one byte of a set (a reversed
// range is read forwards), '\' takes the next byte literally. An unclosed
// '[' set ends with the pattern. Bytes, not runes, as Redis compares.
//
// It backtracks only to the last '*' (any earlier star can take no more
// than it took, as the last can take it instead), so it costs at most
// len(p)*len(s) steps whatever the pattern.
func Match(p, s string) bool {
	pi, si := 0, 0
	starP, starS := -1, 0 // after the last '*', and where s resumes
	for si < len(s) || pi < len(p) {
		if pi < len(p) {
			switch p[pi] {
			case '*':
				starP, starS = pi+1, si
				pi++
				continue
			case '?':
				if si < len(s) {
					pi, si = pi+1, si+1
					continue
				}
			case '[':
				if si < len(s) {
					if n, ok := matchSet(p[pi+1:], s[si]); ok {
						pi, si = len(p)-len(n), si+1
						continue
					}
				}
			case '\\':
				if pi+1 < len(p) && si < len(s) && p[pi+1] == s[si] {
					pi, si = pi+2, si+1
					continue
				}
				if pi+1 == len(p) && si < len(s) && s[si] == '\\' {
					pi, si = pi+1, si+1
					continue
				}
			default:
				if si < len(s) && p[pi] == s[si] {
					pi, si = pi+1, si+1
					continue
				}
			}
		}
		if starP >= 0 && starS < len(s) {
			starS++
			pi, si = starP, starS
			continue
		}
		return false
	}
	return true
}

// matchSet matches c against the set that p opens (after its '['); rest
// is the pattern after the closing ']'.
func matchSet(p string, c byte) (rest string, ok bool) {
	not := len(p) > 0 && p[0] == '^'
	if not {
		p = p[1:]
	}
	hit := false
	for {
		switch {
		case len(p) == 0:
			return "", hit != not // unclosed: the set ends with the pattern
		case p[0] == '\\' && len(p) >= 2:
			if p[1] == c {
				hit = true
			}
			p = p[2:]
		case p[0] == ']':
			return p[1:], hit != not
		case len(p) >= 3 && p[1] == '-':
			lo, hi := p[0], p[2]
			if lo > hi {
				lo, hi = hi, lo
			}
			if lo <= c && c <= hi {
				hit = true
			}
			p = p[3:]
		default:
			if p[0] == c {
				hit = true
			}
			p = p[1:]
		}
	}
}

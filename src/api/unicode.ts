// Well-formed Unicode (issue 12, finding 2): a lone UTF-16 surrogate has no UTF-8 encoding, so
// a string holding one cannot be stored, served or signed as it was given. One rule for the
// validation of cert-manager objects and the store's checks of every object.
// (src/pki keeps its own check: the ground floor imports nothing of ours.)

// With the u flag a surrogate pair is one code point, so \p{Cs} only matches a lone surrogate.
const loneSurrogateRe = /\p{Cs}/u;

/** The first lone surrogate's code unit in s, or undefined. */
export function loneSurrogate(s: string): number | undefined {
  return loneSurrogateRe.exec(s)?.[0].charCodeAt(0);
}

/** Whether s is well-formed Unicode (String.prototype.isWellFormed, which ES2022's lib lacks). */
export function isWellFormed(s: string): boolean {
  return !loneSurrogateRe.test(s);
}

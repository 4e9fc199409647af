package tokenizer

import "github.com/dlclark/regexp2"

// Pre-tokenizer regex lists per tokenizer.ggml.pre, as llama.cpp defines them
// (they follow the split rules of each model's Hugging Face tokenizer.json).

const reGPT2 = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`

var (
	preDefault = []string{
		`[\p{P}\$\+<=>\^~\|]+`,
		reGPT2,
		`\p{N}+`,
		`[0-9][0-9][0-9]`,
	}
	preGPT2 = []string{reGPT2}

	preLlama3 = []string{
		`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	}
	preQwen2 = []string{
		`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	}
	// preGPT4o is the o200k pattern of GPT-4o's tokenizer.json (llama.cpp's
	// LLAMA_VOCAB_PRE_TYPE_GPT4O: gpt-oss, llama4): case-aware letter runs
	// ("HelloWorld" is "Hello" + "World") with the contraction as a suffix, digits in
	// threes, punctuation runs that take a trailing newline or '/'.
	preGPT4o = []string{
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	}
	preDeepseekLLM = []string{
		`[\r\n]`,
		`\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1F7Dᾀ-ᾴᾶ-ᾼ\u1FBEῂ-ῄῆ-ῌῐ-\u1FD3ῖ-\u1FDBῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212A-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+`,
		`\s?[!-/:-~！-／：-～‘-‟　-。]+`,
		`\s+$`,
		`[一-龥ࠀ-一가-퟿]+`,
		`\p{N}+`,
	}
	preDeepseekCoder = []string{
		`[\r\n]`,
		`\s?\p{L}+`,
		`\s?\p{P}+`,
		`[一-龥ࠀ-一가-퟿]+`,
		`\p{N}`,
	}
	preFalcon = []string{
		"[\\p{P}\\$\\+<=>\\^~\\|`]+",
		reGPT2,
		`[0-9][0-9][0-9]`,
	}
	preStarcoder = []string{
		`\p{N}`,
		reGPT2,
	}
)

// span is a half-open range of rune indices.
type span struct{ lo, hi int }

// splitRegex appends to out the pieces of sg: every match of re inside sg,
// and every stretch of text between matches.
func splitRegex(re *regexp2.Regexp, runes []rune, sg span, out []span) []span {
	if sg.lo >= sg.hi {
		return out
	}
	sub := runes[sg.lo:sg.hi]
	prev := 0
	m, err := re.FindRunesMatch(sub)
	for err == nil && m != nil {
		lo, hi := m.Index, m.Index+m.Length
		if hi > lo {
			if lo > prev {
				out = append(out, span{sg.lo + prev, sg.lo + lo})
			}
			out = append(out, span{sg.lo + lo, sg.lo + hi})
			prev = hi
		}
		m, err = re.FindNextMatch(m)
	}
	if prev < len(sub) {
		out = append(out, span{sg.lo + prev, sg.hi})
	}
	return out
}

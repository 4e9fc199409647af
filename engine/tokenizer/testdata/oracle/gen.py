import random, json
random.seed(20260822)
pieces = ["Hello", "world", " the", "The", "don't", "I'm", "we'll", "you're", "they've", "it's", "HE'S", "'S", "'ll",
 "   ", "  ", " ", "\t", "\n", "\n\n", "\r\n", " \n", "\u00a0", "\u3000", "\u2028",
 "1", "12", "123", "1234", "3333333", "٣", "½", "Ⅻ", "0.5", "$", "€", "+-", "<=", "==>", "...", "!!", "?", ",", ".", ";", "(", ")", "[x]", "{}", "@", "#", "%", "&&", "||", "`code`", "~", "^",
 "café", "naïve", "Ünïcödé", "ß", "ﬁ", "Ελληνικά", "ώ", "Привет", "мир", "שלום", "مرحبا", "हिन्दी", "ไทย", "한국어", "日本語", "中文", "漢字", "ひらがな", "カタカナ",
 "😀", "👍🏽", "🇺🇸", "e\u0301", "a\u0308", "\u200d", "𝔘𝔫𝔦", "𐐀", "Ꙁ", "K",
 "<s>", "</s>", "<unk>", "<|endoftext|>", "<|im_start|>", "<|end|>", "<|assistant|>", "<|user|>", "<pad>", "<mask>",
 "▁", "Ġ", "ĊĊ", "<0x0A>", "\u0000", "\x7f", "\x1b[0m",
 "Once upon a time", "def main():", "    return x", "if (a < b) { c++; }", "https://example.com/a?b=c", "foo_bar", "CamelCase", "ALLCAPS", "snake_case_name"]
out = []
for i in range(220):
    k = random.randint(1, 7)
    s = "".join(random.choice(pieces) + random.choice(["", "", " ", "", "\n"]) for _ in range(k))
    out.append(s)
out += ["", " ", "  ", "\n", " Hello", "Hello ", "a\n\n\n b", "x  \n  y", "   \t  z"]
json.dump(out, open("strings.json", "w"), ensure_ascii=False)
print(len(out))

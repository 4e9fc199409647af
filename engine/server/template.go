package server

import (
	"fmt"
	"sort"
	"strings"
)

// Message is one chat message: a role (system, user, assistant; developer is read as
// system) and its text.
type Message struct {
	Role    string
	Content string
}

// Template renders a chat conversation into the prompt text a model was trained on.
// Executing a GGUF's Jinja template is out of scope: Detect recognises the common
// families from the template's text, as llama.cpp's llm_chat_detect_template does, and
// Render writes that family's format in Go.
type Template struct {
	// Name is the family: chatml, llama2, llama2-sys, llama2-sys-bos, llama2-sys-strip,
	// mistral-v1, mistral-v3, mistral-v3-tekken, mistral-v7, llama3, phi3, phi4,
	// falcon3, zephyr, gemma, or plain (the fallback).
	Name string
	// Source says where the choice came from, for the startup line.
	Source string
	// eos ends a zephyr turn: <|endoftext|> as llama.cpp writes it, or </s> when the
	// template names eos_token and not <|endoftext|> (HuggingFaceH4's zephyr).
	eos string
}

// templateNames lists the families Render knows, for --chat-template and errors.
var templateNames = []string{"chatml", "llama2", "llama2-sys", "llama2-sys-bos", "llama2-sys-strip",
	"mistral-v1", "mistral-v3", "mistral-v3-tekken", "mistral-v7", "llama3", "phi3", "phi4",
	"falcon3", "zephyr", "gemma", "plain"}

// TemplateNames returns the names TemplateByName accepts, sorted.
func TemplateNames() []string {
	s := append([]string(nil), templateNames...)
	sort.Strings(s)
	return s
}

// TemplateByName returns the named family (for a --chat-template override).
func TemplateByName(name string) (Template, error) {
	for _, n := range templateNames {
		if n == name {
			return Template{Name: n, Source: "chosen by name"}, nil
		}
	}
	return Template{}, fmt.Errorf("unknown chat template %q (want one of %s)", name, strings.Join(TemplateNames(), ", "))
}

// DetectTemplate picks the family of a tokenizer.chat_template text. An empty text
// or one of no known family gives the plain fallback ("role: content" lines).
func DetectTemplate(src string) Template {
	if strings.TrimSpace(src) == "" {
		return Template{Name: "plain", Source: "no tokenizer.chat_template in the model: plain fallback"}
	}
	if name := detect(src); name != "" {
		t := Template{Name: name, Source: "detected from tokenizer.chat_template"}
		if name == "zephyr" && !strings.Contains(src, "<|endoftext|>") {
			t.eos = "</s>"
		}
		return t
	}
	return Template{Name: "plain", Source: "tokenizer.chat_template of no known family: plain fallback"}
}

// detect follows the order of llama.cpp's detection, which matters: phi-3 templates
// also contain <|user|>, and several families mention [INST]. Unlike llama.cpp, any
// remaining <|user|> template is read as zephyr, so that HuggingFaceH4's zephyr (whose
// turns end with eos_token) is recognised too.
func detect(t string) string {
	has := func(s string) bool { return strings.Contains(t, s) }
	switch {
	case has("<|im_start|>"):
		if has("<|im_sep|>") {
			return "phi4"
		}
		return "chatml"
	case strings.HasPrefix(t, "mistral") || has("[INST]"):
		switch {
		case has("[SYSTEM_PROMPT]"):
			return "mistral-v7"
		case has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]"):
			if has(" [INST]") {
				return "mistral-v1"
			}
			if has(`"[INST]"`) {
				return "mistral-v3-tekken"
			}
			return "mistral-v3"
		case has("content.strip()"):
			return "llama2-sys-strip"
		case has("bos_token + '[INST]"):
			return "llama2-sys-bos"
		case has("<<SYS>>"):
			return "llama2-sys"
		}
		return "llama2"
	case has("<|assistant|>") && has("<|end|>"):
		return "phi3"
	case has("<|assistant|>") && has("<|user|>") && has("</s>"):
		return "falcon3"
	case has("<|user|>"):
		return "zephyr"
	case has("<start_of_turn>"):
		return "gemma"
	case has("<|start_header_id|>") && has("<|end_header_id|>"):
		return "llama3"
	}
	return ""
}

// Render writes msgs in the template's format, ending with the opening of the
// assistant's turn so that the model continues as the assistant. BOS is not written:
// the tokenizer adds it when the model wants one.
func (t Template) Render(msgs []Message) (string, error) {
	var b strings.Builder
	for _, m := range msgs {
		switch m.Role {
		case "system", "user", "assistant":
		default:
			return "", fmt.Errorf("unsupported message role %q (want system, user or assistant)", m.Role)
		}
	}
	switch t.Name {
	case "chatml":
		for _, m := range msgs {
			b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
		}
		b.WriteString("<|im_start|>assistant\n")
	case "phi4":
		for _, m := range msgs {
			b.WriteString("<|im_start|>" + m.Role + "<|im_sep|>" + m.Content + "<|im_end|>")
		}
		b.WriteString("<|im_start|>assistant<|im_sep|>")
	case "mistral-v7":
		for _, m := range msgs {
			switch m.Role {
			case "system":
				b.WriteString("[SYSTEM_PROMPT] " + m.Content + "[/SYSTEM_PROMPT]")
			case "user":
				b.WriteString("[INST] " + m.Content + "[/INST]")
			default:
				b.WriteString(" " + m.Content + "</s>")
			}
		}
	case "mistral-v1", "mistral-v3", "mistral-v3-tekken":
		lead, trail := "", " "
		if t.Name == "mistral-v1" {
			lead = " "
		}
		if t.Name == "mistral-v3-tekken" {
			trail = ""
		}
		inTurn := false
		for _, m := range msgs {
			if !inTurn {
				b.WriteString(lead + "[INST]" + trail)
				inTurn = true
			}
			switch m.Role {
			case "system":
				b.WriteString(m.Content + "\n\n")
			case "user":
				b.WriteString(m.Content + lead + "[/INST]")
			default:
				c := m.Content
				if t.Name == "mistral-v3" {
					c = strings.TrimSpace(c)
				}
				b.WriteString(trail + c + "</s>")
				inTurn = false
			}
		}
	case "llama2", "llama2-sys", "llama2-sys-bos", "llama2-sys-strip":
		sys := t.Name != "llama2"
		b.WriteString("[INST] ")
		inTurn := true
		for _, m := range msgs {
			c := m.Content
			if t.Name == "llama2-sys-strip" {
				c = strings.TrimSpace(c)
			}
			if !inTurn {
				inTurn = true
				if t.Name == "llama2-sys-bos" {
					b.WriteString("<s>")
				}
				b.WriteString("[INST] ")
			}
			switch m.Role {
			case "system":
				if sys {
					b.WriteString("<<SYS>>\n" + c + "\n<</SYS>>\n\n")
				} else {
					b.WriteString(c + "\n")
				}
			case "user":
				b.WriteString(c + " [/INST]")
			default:
				b.WriteString(c + "</s>")
				inTurn = false
			}
		}
	case "llama3":
		for _, m := range msgs {
			b.WriteString("<|start_header_id|>" + m.Role + "<|end_header_id|>\n\n" + strings.TrimSpace(m.Content) + "<|eot_id|>")
		}
		b.WriteString("<|start_header_id|>assistant<|end_header_id|>\n\n")
	case "phi3":
		for _, m := range msgs {
			b.WriteString("<|" + m.Role + "|>\n" + m.Content + "<|end|>\n")
		}
		b.WriteString("<|assistant|>\n")
	case "falcon3":
		for _, m := range msgs {
			b.WriteString("<|" + m.Role + "|>\n" + m.Content + "\n")
		}
		b.WriteString("<|assistant|>\n")
	case "zephyr":
		eos := t.eos
		if eos == "" {
			eos = "<|endoftext|>"
		}
		for _, m := range msgs {
			b.WriteString("<|" + m.Role + "|>\n" + m.Content + eos + "\n")
		}
		b.WriteString("<|assistant|>\n")
	case "gemma":
		// Gemma has no system role: the system text opens the next user turn.
		sys := ""
		for _, m := range msgs {
			if m.Role == "system" {
				sys = strings.TrimSpace(m.Content)
				continue
			}
			role := m.Role
			if role == "assistant" {
				role = "model"
			}
			b.WriteString("<start_of_turn>" + role + "\n")
			if sys != "" && role != "model" {
				b.WriteString(sys + "\n\n")
				sys = ""
			}
			b.WriteString(strings.TrimSpace(m.Content) + "<end_of_turn>\n")
		}
		b.WriteString("<start_of_turn>model\n")
	case "plain", "":
		for _, m := range msgs {
			b.WriteString(m.Role + ": " + m.Content + "\n")
		}
		b.WriteString("assistant:")
	default:
		return "", fmt.Errorf("unknown chat template %q", t.Name)
	}
	return b.String(), nil
}

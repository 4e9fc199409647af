package server

import (
	"strings"
	"testing"

	"llmbench/engine/gguf"
)

// Real tokenizer.chat_template strings, as published with the models (and collected in
// llama.cpp's tests/test-chat-template.cpp); phi-3's is the one in llama.cpp's
// ggml-vocab-phi-3.gguf.
var realTemplates = []struct{ model, src, want string }{
	{"teknium/OpenHermes-2.5-Mistral-7B", `{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`, "chatml"},
	{"Qwen/Qwen2-0.5B-Instruct", `{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful assistant<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`, "chatml"},
	{"mistralai/Mistral-7B-Instruct-v0.2", `{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}`, "llama2"},
	{"TheBloke/FusionNet_34Bx2_MoE-AWQ", `{%- for idx in range(0, messages|length) -%}\n{%- if messages[idx]['role'] == 'user' -%}\n{%- if idx > 1 -%}\n{{- bos_token + '[INST] ' + messages[idx]['content'] + ' [/INST]' -}}\n{%- else -%}\n{{- messages[idx]['content'] + ' [/INST]' -}}\n{%- endif -%}\n{% elif messages[idx]['role'] == 'system' %}\n{{- '[INST] <<SYS>>\\n' + messages[idx]['content'] + '\\n<</SYS>>\\n\\n' -}}\n{%- elif messages[idx]['role'] == 'assistant' -%}\n{{- ' '  + messages[idx]['content'] + ' ' + eos_token -}}\n{% endif %}\n{% endfor %}`, "llama2-sys-bos"},
	{"bofenghuang/vigogne-2-70b-chat", `{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}`, "llama2-sys-strip"},
	{"google/gemma-7b-it", `{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}`, "gemma"},
	{"meta-llama/Meta-Llama-3-8B-Instruct", `{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}`, "llama3"},
	{"microsoft/Phi-3-mini-4k-instruct", "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' + '\n' + message['content'] + '<|end|>' + '\n' + '<|assistant|>' + '\n'}}{% elif (message['role'] == 'assistant') %}{{message['content'] + '<|end|>' + '\n'}}{% endif %}{% endfor %}", "phi3"},
	{"HuggingFaceH4/zephyr-7b-beta", "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}", "zephyr"},
	{"eachadea/vicuna-13b-1.1 (no family of ours)", "{%- for message in messages %}{%- if message['role'] == 'user' -%}{{-'USER: ' + message['content'] + '\n'-}}{%- else -%}{{-'ASSISTANT: ' + message['content'] + '</s>\n' -}}{%- endif -%}{%- endfor -%}", "plain"},
	{"no template", "", "plain"},
}

func TestDetectTemplate(t *testing.T) {
	for _, c := range realTemplates {
		if got := DetectTemplate(c.src); got.Name != c.want {
			t.Errorf("%s: detected %q, want %q", c.model, got.Name, c.want)
		}
	}
	// The test models carry no chat template: the plain fallback, and it says so.
	for _, path := range []string{"../../testdata/models/tinystories-656k-q8_0.gguf", "../builtin/stories260K.gguf"} {
		f, err := gguf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := f.String("tokenizer.chat_template")
		f.Close()
		if got := DetectTemplate(src); got.Name != "plain" || !strings.Contains(got.Source, "no tokenizer.chat_template") {
			t.Errorf("%s: %+v, want the plain fallback", path, got)
		}
	}
}

// TestRenderTemplate checks each family's rendering of llama.cpp's test conversation
// against the output llama.cpp's llm_chat_apply_template gives for it.
func TestRenderTemplate(t *testing.T) {
	conv := []Message{
		{"system", "You are a helpful assistant"},
		{"user", "Hello"},
		{"assistant", "Hi there"},
		{"user", "Who are you"},
		{"assistant", "   I am an assistant   "},
		{"user", "Another question"},
	}
	cases := []struct{ name, want string }{
		{"chatml", "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother question<|im_end|>\n<|im_start|>assistant\n"},
		{"llama2", "[INST] You are a helpful assistant\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   I am an assistant   </s>[INST] Another question [/INST]"},
		{"llama2-sys-bos", "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s><s>[INST] Who are you [/INST]   I am an assistant   </s><s>[INST] Another question [/INST]"},
		{"llama2-sys-strip", "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] Who are you [/INST]I am an assistant</s>[INST] Another question [/INST]"},
		{"gemma", "<start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n<start_of_turn>model\nHi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n<start_of_turn>model\nI am an assistant<end_of_turn>\n<start_of_turn>user\nAnother question<end_of_turn>\n<start_of_turn>model\n"},
		{"llama3", "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
		{"phi3", "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"},
		{"zephyr", "<|system|>\nYou are a helpful assistant<|endoftext|>\n<|user|>\nHello<|endoftext|>\n<|assistant|>\nHi there<|endoftext|>\n<|user|>\nWho are you<|endoftext|>\n<|assistant|>\n   I am an assistant   <|endoftext|>\n<|user|>\nAnother question<|endoftext|>\n<|assistant|>\n"},
		{"mistral-v7", "[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT][INST] Hello[/INST] Hi there</s>[INST] Who are you[/INST]    I am an assistant   </s>[INST] Another question[/INST]"},
		{"plain", "system: You are a helpful assistant\nuser: Hello\nassistant: Hi there\nuser: Who are you\nassistant:    I am an assistant   \nuser: Another question\nassistant:"},
	}
	for _, c := range cases {
		tm, err := TemplateByName(c.name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tm.Render(conv)
		if err != nil || got != c.want {
			t.Errorf("%s: %v\ngot  %q\nwant %q", c.name, err, got, c.want)
		}
	}
	// HuggingFaceH4's zephyr ends turns with its eos_token, </s>.
	z := DetectTemplate(realTemplates[8].src)
	if got, _ := z.Render(conv[1:2]); got != "<|user|>\nHello</s>\n<|assistant|>\n" {
		t.Errorf("zephyr-7b-beta: %q", got)
	}
	if _, err := TemplateByName("jinja"); err == nil {
		t.Error("unknown template name accepted")
	}
	if _, err := (Template{Name: "chatml"}).Render([]Message{{"tool", "x"}}); err == nil {
		t.Error("role tool accepted")
	}
}

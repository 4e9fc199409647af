package server

import (
	"encoding/json"
	"net/http"
)

// Detokenizer turns token ids back into text; engine's tokenizer satisfies it.
// Detokenize is llama.cpp's llama_detokenize (as Hugging Face's decode, which vLLM
// answers with); Decode concatenates the pieces (llama-server's /detokenize).
type Detokenizer interface {
	Detokenize(ids []int32, removeSpecial, unparseSpecial bool) string
	Decode(ids []int32) string
}

// tokenizeRequest is the body of /tokenize in vLLM's shape ({model?, prompt,
// add_special_tokens?}) or llama-server's ({content, add_special?}).
type tokenizeRequest struct {
	Model            string  `json:"model"`
	Prompt           *string `json:"prompt"`
	AddSpecialTokens *bool   `json:"add_special_tokens"` // vLLM: default true
	Content          *string `json:"content"`
	AddSpecial       bool    `json:"add_special"` // llama-server: default false
}

// tokenize is POST /tokenize. With prompt (vLLM) the answer is {count, max_model_len,
// tokens, token_strs}; with content (llama-server) it is {tokens}.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Tok == nil {
		writeAPIError(w, &apiError{Status: http.StatusNotImplemented, Type: "server_error", Message: "this server has no tokenizer"})
		return
	}
	var q tokenizeRequest
	if aerr := s.readJSON(w, r, &q); aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	if aerr := s.checkModel(q.Model); aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	switch {
	case q.Prompt != nil:
		add := q.AddSpecialTokens == nil || *q.AddSpecialTokens
		ids := nonNil(s.cfg.Tok.Encode(*q.Prompt, add, true))
		writeJSON(w, http.StatusOK, map[string]any{"count": len(ids), "max_model_len": s.cfg.Context, "tokens": ids, "token_strs": nil})
	case q.Content != nil:
		writeJSON(w, http.StatusOK, map[string]any{"tokens": nonNil(s.cfg.Tok.Encode(*q.Content, q.AddSpecial, true))})
	default:
		writeAPIError(w, badRequest("tokenize: give prompt (vLLM) or content (llama-server)"))
	}
}

// detokenize is POST /detokenize {tokens}: the answer carries the text as vLLM
// answers it (prompt) and as llama-server does (content), since the two requests are
// alike.
func (s *Server) detokenize(w http.ResponseWriter, r *http.Request) {
	d, ok := s.cfg.Tok.(Detokenizer)
	if !ok {
		writeAPIError(w, &apiError{Status: http.StatusNotImplemented, Type: "server_error", Message: "this server cannot detokenize"})
		return
	}
	var q struct {
		Model  string           `json:"model"`
		Tokens *json.RawMessage `json:"tokens"`
	}
	if aerr := s.readJSON(w, r, &q); aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	if aerr := s.checkModel(q.Model); aerr != nil {
		writeAPIError(w, aerr)
		return
	}
	var ids []int32
	if q.Tokens == nil || json.Unmarshal(*q.Tokens, &ids) != nil {
		writeAPIError(w, badRequest("detokenize: tokens must be a list of token ids"))
		return
	}
	for _, id := range ids {
		if id < 0 || int(id) >= s.cfg.Tok.VocabSize() {
			writeAPIError(w, badRequest("detokenize: token id %d outside the vocabulary of %d", id, s.cfg.Tok.VocabSize()))
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"prompt": d.Detokenize(ids, false, true), "content": d.Decode(ids)})
}

func nonNil(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return ids
}

package demogateway

import "net/http"

// demoModels are the model names that select each reply kind.
var demoModels = []string{"demo-openai", "demo-openrouter", "demo-plain", "demo-structured", "demo-hustle", "demo-ui", "demo-cut", "demo-auto"}

type modelList struct {
	Object string  `json:"object"`
	Data   []model `json:"data"`
}

type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// serveModels answers GET …/models like OpenAI, so that chat UIs that list
// models before they chat find the demo ones.
func serveModels(w http.ResponseWriter, _ *http.Request) error {
	list := modelList{Object: "list", Data: make([]model, 0, len(demoModels))}
	for _, id := range demoModels {
		list.Data = append(list.Data, model{ID: id, Object: "model", Created: demoCreated, OwnedBy: "llm_meta_demo"})
	}
	return writeJSON(w, http.StatusOK, list)
}

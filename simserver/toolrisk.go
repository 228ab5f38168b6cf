package simserver

import (
	"slices"
	"strings"
)

// Why the simulated model never calls a tool unless the profile's agent.allow names it, so
// that a real harness it drives never runs a random command and never waits for a person who
// is not there.
const (
	riskChanges = "its name says it changes or runs things"
	riskAsks    = "its name says it asks a person"
)

// changeWords are the words of a tool's name that say it changes or runs things; changeStems
// say so inside a word too (todowrite, multiedit, runcommand). A false alarm only keeps a tool
// from being called; a miss could run a command.
var (
	changeWords = []string{
		"bash", "shell", "sh", "zsh", "cmd", "command", "commands", "terminal", "exec", "execute", "run", "runs",
		"eval", "python", "script", "spawn", "write", "edit", "patch", "apply", "delete",
		"del", "remove", "rm", "rmdir", "mkdir", "touch", "create", "move", "mv", "rename", "copy", "cp",
		"update", "modify", "replace", "insert", "overwrite", "append", "save", "upload", "install",
		"uninstall", "commit", "push", "merge", "rebase", "reset", "checkout", "deploy", "publish", "release",
		"kill", "terminate", "stop", "start", "restart", "exit", "drop", "truncate", "send", "email", "post",
		"put", "set", "submit", "purchase", "buy", "pay", "transfer", "click", "fill", "press", "keyboard",
		"mouse", "computer",
	}
	changeStems = []string{
		"bash", "shell", "exec", "write", "edit", "patch", "delete", "remove", "command", "terminal",
		"install", "commit", "deploy", "upload", "rename", "overwrite", "kill", "submit",
	}
	// askWords are the words of a tool's name that say it asks a person; askStems say so
	// inside a word (askuserquestion).
	askWords = []string{
		"ask", "confirm", "confirmation", "approve", "approval", "clarify", "clarification", "elicit",
		"elicitation", "human", "user", "permission", "question", "feedback",
	}
	askStems = []string{"askuser", "askhuman", "userinput", "humaninput", "confirm", "approv"}
)

// riskOf says why the model must not call a tool of that name unasked, or "" when it may.
func riskOf(name string) string {
	words := keyWords(name)
	lower := strings.ToLower(name)
	has := func(list, stems []string) bool {
		for _, w := range words {
			if slices.Contains(list, w) {
				return true
			}
		}
		for _, s := range stems {
			if strings.Contains(lower, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has(askWords, askStems):
		return riskAsks
	case has(changeWords, changeStems):
		return riskChanges
	}
	return ""
}

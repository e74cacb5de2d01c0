// gpuwarden completion bash: a bash completion script written from the command tree itself, so
// that a command or option added anywhere completes without a second list to keep in step. The
// package installs its output as share/bash-completion/completions/gpuwarden.
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "cli/commands.h"

namespace gw::cli {

namespace {

// Every command path ("gpuwarden", "gpuwarden slurm prolog": bash's associative arrays take no
// empty key) with the words that may follow it there:
// its subcommands and its long options (the top's global options are accepted everywhere).
void walk(const CLI::App& node, const std::string& path, const std::set<std::string>& globals,
          std::map<std::string, std::set<std::string>>& out) {
  auto& words = out[path];
  words.insert(globals.begin(), globals.end());
  for (const CLI::Option* o : node.get_options())
    for (const auto& name : o->get_lnames()) words.insert("--" + name);
  for (const CLI::App* sub : node.get_subcommands({})) {
    if (sub->get_name().empty()) continue;
    words.insert(sub->get_name());
    walk(*sub, path + " " + sub->get_name(), globals, out);
  }
}

// Command and option names are [a-z0-9-]; anything else would need quoting in the script.
bool plainWord(const std::string& w) {
  for (char c : w)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) return false;
  return !w.empty();
}

}  // namespace

void addCompletion(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand("completion", "Print a shell completion script: gpuwarden completion bash");
  auto shell = std::make_shared<std::string>();
  cmd->add_option("shell", *shell, "The shell (bash)")->required()->check(CLI::IsMember({"bash"}));
  cmd->callback([&app, &run, shell]() {
    std::set<std::string> globals;
    for (const CLI::Option* o : app.get_options())
      for (const auto& name : o->get_lnames()) globals.insert("--" + name);
    std::map<std::string, std::set<std::string>> tree;
    walk(app, "gpuwarden", globals, tree);
    std::cout << "# bash completion for gpuwarden, written by `gpuwarden completion bash`.\n"
                 "declare -gA _gpuwarden_words=(\n";
    for (const auto& [path, words] : tree) {
      std::string list;
      for (const auto& w : words)
        if (plainWord(w.substr(w.starts_with("--") ? 2 : 0))) list += (list.empty() ? "" : " ") + w;
      std::cout << "  [\"" << path << "\"]=\"" << list << "\"\n";
    }
    std::cout << ")\n"
                 "_gpuwarden() {\n"
                 "  local cur=${COMP_WORDS[COMP_CWORD]} path=gpuwarden w i\n"
                 "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
                 "    w=${COMP_WORDS[i]}\n"
                 "    [[ $w == -* ]] && continue\n"
                 "    if [[ -n ${_gpuwarden_words[\"$path $w\"]+x} ]]; then path=\"$path $w\"; fi\n"
                 "  done\n"
                 "  COMPREPLY=($(compgen -W \"${_gpuwarden_words[\"$path\"]}\" -- \"$cur\"))\n"
                 "}\n"
                 "complete -o default -F _gpuwarden gpuwarden\n";
    (void)shell;  // bash is the only choice; kept alive with the option it is bound to
    run.exit_code = kExitOk;
  });
}

}  // namespace gw::cli

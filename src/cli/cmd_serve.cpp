// gpuwarden serve: the node agent (sampler, history, /metrics, JSON API). See docs/api.md and
// docs/config.md.
#include <cstdlib>
#include <iostream>

#include "cli/commands.h"
#include "cli/smi/smi_settings.h"
#include "server/agent.h"

namespace gw::cli {

void addServe(CLI::App& app, Run& run) {
  auto* cmd = app.add_subcommand("serve",
                                 "Run the node agent: sample every GPU, keep history, serve /metrics and the JSON API");
  struct Opts {
    std::string config;
    std::vector<std::string> listen;
    std::string data_dir;
    std::string naming;
    std::string web_config;
    std::string counters;
    std::string pod_resources_socket;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--config", o->config, "Configuration file (YAML, see docs/config.md); SIGHUP re-reads it");
  cmd->add_option("--listen", o->listen,
                  "Listen address, e.g. :9400 or 127.0.0.1:9400 (repeatable; overrides the file)");
  cmd->add_option("--data-dir", o->data_dir, "Directory of the history database (overrides the file)");
  cmd->add_option("--metrics-naming", o->naming, "dcgm (dcgm-exporter's names, default) or native")
      ->check(CLI::IsMember({"dcgm", "native"}));
  cmd->add_option("--web.config.file,--web-config-file", o->web_config,
                  "Web configuration (the Prometheus exporters' format): TLS certificate and key, client CA, "
                  "basic_auth_users with bcrypt hashes (see docs/config.md; make a hash with "
                  "`gpuwarden hash-password`); overrides web_config_file in --config");
  cmd->add_option("-f,--collectors", o->counters,
                  "dcgm-exporter's counters file (CSV: DCGM_FI_..., gauge|counter|label, help): collect and export "
                  "the fields it names, as dcgm-exporter -f does; fields gpuwarden lacks are named in the log");
  auto* pods = cmd->add_option("--pod-resources-socket", o->pod_resources_socket,
                               "The kubelet's pod-resources socket, read for the pod, namespace and container "
                               "labels of each GPU (docs/kubernetes.md); \"\" off; overrides the file");
  cmd->footer(
      "Runs until SIGTERM or SIGINT; SIGHUP re-reads --config. Without a driver it waits for one (health\n"
      "says unknown), it does not exit.\n"
      "Exit codes: 0 stopped by SIGTERM or SIGINT, 1 could not start (a listen address, the data folder,\n"
      "threads), 2 bad arguments or configuration (the file, line and key are named), 3 --simulate without\n"
      "the simulator library.");
  cmd->callback([&run, o, pods]() {
    server::AgentOptions ao;
    if (!o->counters.empty()) ao.counters_file = o->counters;
    ao.config_path = o->config;
    if (!o->listen.empty()) {
      std::vector<server::ListenAddress> addrs;
      for (const auto& l : o->listen) {
        auto a = server::parseListenAddress(l);
        if (!a) {
          printError("--listen: " + a.error());
          run.exit_code = kExitUsage;
          return;
        }
        addrs.push_back(*a);
      }
      ao.listen = addrs;
    }
    if (!o->data_dir.empty()) ao.data_dir = o->data_dir;
    if (!o->web_config.empty()) ao.web_config_file = o->web_config;
    if (pods->count() > 0) {
      if (!o->pod_resources_socket.empty() && o->pod_resources_socket.front() != '/') {
        printError("--pod-resources-socket: must be an absolute path (or \"\" for off)");
        run.exit_code = kExitUsage;
        return;
      }
      ao.pod_resources_socket = o->pod_resources_socket;
    }
    if (!o->naming.empty()) ao.naming = exporter::parseNaming(o->naming);

    // What Context::nvml() does, as a function the sampler calls again after a driver reload.
    bool usage_error = false;
    auto target = resolveNvmlTarget(run.ctx.options, &usage_error);
    if (!target) {
      printError(target.error());
      run.exit_code = usage_error ? kExitUsage : kExitNoDriver;
      return;
    }
    if (!target->scenario.empty()) ::setenv("GPUWARDEN_SIM_SCENARIO", target->scenario.c_str(), 1);
    const std::string library = target->library;
    ao.opener = [library]() { return nvml::Session::open({library}); };
    ao.root = run.ctx.options.root;
    ao.settings = &smi::settingsRequest;

    auto agent = server::Agent::create(std::move(ao));
    if (!agent) {
      printError(agent.error());
      run.exit_code = kExitUsage;
      return;
    }
    server::Agent::blockSignals();  // before any thread exists
    // A thread or an allocation the system refuses at start is an error with a message, not an abort.
    try {
      if (Status s = (*agent)->start(); !s) {
        printError(s.message());
        run.exit_code = 1;
        return;
      }
    } catch (const std::exception& e) {
      printError(std::string("cannot start the agent: ") + e.what() + " (out of threads or memory?)");
      run.exit_code = 1;
      return;
    }
    run.exit_code = (*agent)->run();
  });
}

}  // namespace gw::cli

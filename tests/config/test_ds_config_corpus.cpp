// The ds_config corpus (tests/fixtures/ds_configs/): every valid file resolves to the values its
// sidecar expects (and prints as JSON that loads again to the same values); every invalid file
// fails with a one-line "[config] ..." error containing each expected substring (the key path
// among them).
#include <gtest/gtest.h>

#include "config/corpus_util.h"
#include "zerotrain/config/load.h"
#include "zerotrain/core/error.h"

namespace zt::test {
namespace {

TEST(DsConfigCorpus, HasEnoughFiles) {
  EXPECT_GE(ds_corpus("valid").size(), 15u);
  EXPECT_GE(ds_corpus("invalid").size(), 25u);
}

void expect_values(const nlohmann::json& printed, const nlohmann::json& expect,
                   const std::string& file) {
  for (const auto& [path, want] : expect.items()) {
    if (path.starts_with("#")) continue;
    const nlohmann::json* got = json_at(printed, path);
    ASSERT_NE(got, nullptr) << file << ": no key " << path;
    if (want.is_number() && got->is_number())
      EXPECT_DOUBLE_EQ(got->get<double>(), want.get<double>()) << file << ": " << path;
    else
      EXPECT_EQ(*got, want) << file << ": " << path;
  }
}

TEST(DsConfigCorpus, ValidFilesResolveToExpectedValues) {
  for (const auto& file : ds_corpus("valid")) {
    SCOPED_TRACE(file.filename().string());
    const nlohmann::json side = ds_expectation(file);
    const config::ConfigOverrides o = overrides_from_json(side["overrides"]);
    config::LoadedConfig loaded;
    ASSERT_NO_THROW(loaded = config::load_ds_config(file, o));
    const nlohmann::json printed = nlohmann::json::parse(config::ds_config_json(loaded.config));
    expect_values(printed, side["expect"], file.filename().string());
    if (side["expect"].contains("#warnings")) {
      EXPECT_EQ(loaded.warnings.size(), side["expect"]["#warnings"].get<size_t>());
    }
    // The printed configuration is itself a valid ds_config that resolves to the same values.
    config::ConfigOverrides world_only;
    world_only.world_size = o.world_size;
    const config::LoadedConfig again =
        config::parse_ds_config(printed.dump(), "printed", world_only);
    EXPECT_EQ(config::ds_config_json(again.config), printed.dump(2));
  }
}

TEST(DsConfigCorpus, InvalidFilesFailNamingTheKey) {
  for (const auto& file : ds_corpus("invalid")) {
    SCOPED_TRACE(file.filename().string());
    const nlohmann::json side = ds_expectation(file);
    const config::ConfigOverrides o = overrides_from_json(side["overrides"]);
    try {
      config::load_ds_config(file, o);
      ADD_FAILURE() << file.filename() << " loaded without an error";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_TRUE(msg.starts_with("[config] ")) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      for (const auto& want : side["error"])
        EXPECT_NE(msg.find(want.get<std::string>()), std::string::npos)
            << "message: " << msg << "\nexpected to contain: " << want.get<std::string>();
    }
  }
}

}  // namespace
}  // namespace zt::test

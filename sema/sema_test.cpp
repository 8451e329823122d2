#include "sema/sema.h"

#include <doctest/doctest.h>

#include "frontend/parse/parse.h"
#include "sema/builtins.h"
#include "sema/types.h"

namespace tessera::sema {
namespace {

TEST_CASE("types are interned: equal types are one id") {
  IdentifierTable identifiers;
  TypeStore types(identifiers);
  IdentifierId n = identifiers.intern("n");
  DimId dims[] = {types.symbol_dim(n), types.constant_dim(4)};
  TypeId a = types.tensor(ScalarType::F32, {}, dims, AddressSpace::Global, false, false);
  TypeId b = types.tensor(ScalarType::F32, {}, dims, AddressSpace::Global, false, false);
  TypeId c = types.tensor(ScalarType::F32, {}, dims, AddressSpace::Global, true, false);
  CHECK(a == b);
  CHECK_FALSE(a == c);
  CHECK(types.with_mut(a, true) == c);
  CHECK(types.to_string(c) == "mut f32[n, 4]");
  CHECK(types.scalar(ScalarType::BF16) == types.scalar(ScalarType::BF16));
}

TEST_CASE("dimension expressions fold constants and stay symbolic otherwise") {
  IdentifierTable identifiers;
  TypeStore types(identifiers);
  DimId six = types.binary_dim(DimKind::Mul, types.constant_dim(2), types.constant_dim(3));
  CHECK(types.constant_value(six) == 6);
  DimId k = types.symbol_dim(identifiers.intern("K"));
  DimId tp = types.symbol_dim(identifiers.intern("tp"));
  DimId ratio = types.binary_dim(DimKind::Div, k, tp);
  CHECK(ratio == types.binary_dim(DimKind::Div, k, tp));
  CHECK(types.dim_to_string(ratio) == "(K/tp)");
  CHECK_FALSE(types.dynamic_dim() == types.dynamic_dim());  // every `?` is distinct
}

TEST_CASE("policies intern and print") {
  IdentifierTable identifiers;
  TypeStore types(identifiers);
  Policy p;
  p.accum = ScalarType::F32;
  p.stochastic_round = true;
  PolicyId id = types.intern_policy(p);
  CHECK(id == types.intern_policy(p));
  CHECK(types.intern_policy(Policy{}) == PolicyId{});
  CHECK(types.to_string(types.scalar(ScalarType::FP8E4M3, id)) == "fp8_e4m3 @accum(f32) @stochastic_round");
}

TEST_CASE("autotune: the points are the product in the order written; where= prunes; a pin is exact") {
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags(sources, consumer);
  ValueStores values;
  FileId file = sources.add_file("t.tsr",
                                 "@kernel.autotune(space=dict(A=[1, 2], B=[10, 20, 30]), where=lambda B, A: A * B != 40)\n"
                                 "def k(x: mut f32[n]):\n"
                                 "    s = tile.alloc_shared((A * 8192,), f32)\n"
                                 "    x[tile.linear_id()] = 1.0\n");
  ParsedFile parsed = lex_and_parse(file, sources, values, diags);
  auto module = check_module(parsed.ast, values, diags);
  diags.flush();
  CHECK(consumer.diagnostics.empty());  // A=2 is over the group's 48 KiB, but only per point
  const FunctionInfo& k = module->functions[0];
  REQUIRE(k.autotune_points.size() == 6);
  std::vector<std::vector<int64_t>> expected = {{1, 10}, {1, 20}, {1, 30}, {2, 10}, {2, 20}, {2, 30}};
  for (size_t p = 0; p < 6; ++p) {
    CHECK(k.autotune_points[p].values == expected[p]);
    CHECK(k.autotune_points[p].pruned == (p == 4 ? "where= is false" : ""));
  }
  CHECK_FALSE(k.autotune_pinned);
  AutotunePin small{"k", {1, 10}};
  auto pinned = check_module(parsed.ast, values, diags, &small);
  diags.flush();
  CHECK(consumer.diagnostics.empty());
  CHECK(pinned->functions[0].autotune_pinned);
  CHECK(pinned->functions[0].shared_bytes == 32768u);
  AutotunePin large{"k", {2, 10}};
  pinned = check_module(parsed.ast, values, diags, &large);
  diags.flush();
  REQUIRE(consumer.diagnostics.size() == 1);
  CHECK(consumer.diagnostics[0].kind == diag::SemaSharedTargetLimit);
}

TEST_CASE("dtype names and aliases") {
  CHECK(lookup_dtype("f32")->type == ScalarType::F32);
  CHECK(lookup_dtype("fp32")->type == ScalarType::F32);
  CHECK(lookup_dtype("int8")->type == ScalarType::I8);
  CHECK(lookup_dtype("fp8")->defaulted_format);
  CHECK(lookup_dtype("fp6")->type == ScalarType::FP6E3M2);
  CHECK_FALSE(lookup_dtype("float128").has_value());
  CHECK(scalar_info(ScalarType::FP4E2M1).bits == 4);
  CHECK(is_storage_float(ScalarType::BF16));
  CHECK_FALSE(is_storage_float(ScalarType::F32));
}

TEST_CASE("builtins: canonical paths, aliases and namespaces") {
  CHECK(lookup_builtin("tile.barrier") == BuiltinId::TileBarrier);
  CHECK(lookup_builtin("tbarrier") == BuiltinId::TileBarrier);
  CHECK(lookup_builtin("tshared.alloc") == BuiltinId::TileAllocShared);
  CHECK(lookup_builtin("dist.collective.all_reduce") == BuiltinId::AllReduce);
  CHECK(builtin_info(BuiltinId::TileBarrier).context == CallContext::Kernel);
  CHECK(builtin_info(BuiltinId::AllReduce).effect == Effect::Collective);
  CHECK(is_builtin_namespace("tile"));
  CHECK(is_builtin_namespace("dist.collective"));
  CHECK_FALSE(lookup_builtin("tile.nope").has_value());
}

TEST_CASE("check_module types a kernel and records its facts") {
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags(sources, consumer);
  ValueStores values;
  FileId file = sources.add_file("t.tsr",
                                 "@kernel(tile=(64,), shared=1_KiB)\n"
                                 "def k(x: f32[n], y: mut f32[n]):\n"
                                 "    s = tile.alloc_shared((64,), f32)\n"
                                 "    i = tile.local_id()\n"
                                 "    s[i] = x[i]\n"
                                 "    tile.barrier()\n"
                                 "    y[i] = s[i] * 2.0\n");
  ParsedFile parsed = lex_and_parse(file, sources, values, diags);
  auto module = check_module(parsed.ast, values, diags);
  diags.flush();
  CHECK(consumer.diagnostics.empty());
  REQUIRE(module->functions.size() == 1);
  const FunctionInfo& k = module->functions[0];
  CHECK(k.kind == FunctionKind::Kernel);
  CHECK(k.group_shape == std::vector<int64_t>{64});
  CHECK(k.shared_budget == 1024u);
  CHECK(k.shared_bytes == 256u);
  CHECK(k.effect == Effect::State);
  CHECK(module->types.to_string(k.parameter_types[1]) == "mut f32[n]");
}

TEST_CASE("module-level dtype aliases type parameters and shared buffers") {
  SourceManager sources;
  CollectingDiagnosticConsumer consumer;
  DiagnosticEngine diags(sources, consumer);
  ValueStores values;
  FileId file = sources.add_file("t.tsr",
                                 "T = bf16\n"
                                 "ACC = T\n"
                                 "Q = fp8_e4m3 @accum(f32)\n"
                                 "@kernel(tile=(64,))\n"
                                 "def k(x: T[n], q: Q[n], y: mut f32[n]):\n"
                                 "    s = tile.alloc_shared((64,), ACC)\n"
                                 "    i = tile.local_id()\n"
                                 "    s[i] = x[i]\n"
                                 "    y[i] = cast(s[i], f32) + q[i]\n");
  ParsedFile parsed = lex_and_parse(file, sources, values, diags);
  auto module = check_module(parsed.ast, values, diags);
  diags.flush();
  CHECK(consumer.diagnostics.empty());
  REQUIRE(module->functions.size() == 1);
  const FunctionInfo& k = module->functions[0];
  CHECK(module->types.to_string(k.parameter_types[0]) == "bf16[n]");
  CHECK(module->types.to_string(k.parameter_types[1]) == "fp8_e4m3[n] @accum(f32)");
  CHECK(k.shared_bytes == 128u);  // 64 bf16
}

}  // namespace
}  // namespace tessera::sema

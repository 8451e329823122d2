// Ahead-of-time host objects (aot.h, docs/aot.md).
#include "codegen/aot.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstddef>
#include <map>

#include "codegen/cpu_target.h"
#include "tessera/tessera_aot.h"

namespace tessera::codegen {
namespace {

// The layouts built below (LLVM's natural struct layout is the C one here).
static_assert(sizeof(tessAotParameter) == 32 && offsetof(tessAotParameter, dims) == 24);
static_assert(sizeof(tessAotKernel) == 96 && offsetof(tessAotKernel, static_shared_bytes) == 32 &&
              offsetof(tessAotKernel, parameters) == 48 && offsetof(tessAotKernel, symbols) == 64 &&
              offsetof(tessAotKernel, autotune_point) == 80 && offsetof(tessAotKernel, autotune_key) == 88);
static_assert(sizeof(tessAotModule) == 64 && offsetof(tessAotModule, cpu_kernels) == 32 &&
              offsetof(tessAotModule, kernels) == 48 && offsetof(tessAotModule, cache) == 56);

class ObjectBuilder {
 public:
  ObjectBuilder(llvm::Module& module, const AotObjectOptions& options)
      : module_(module), context_(module.getContext()), options_(options), prefix_(aot_symbol_prefix(options.name_space)) {}

  std::optional<std::string> build(const std::vector<AotKernel>& kernels, const std::vector<AotKernel>& functions) {
    // The CPU target's table becomes private to this object.
    llvm::GlobalVariable* table = module_.getGlobalVariable("tessera_cpu_kernels");
    llvm::GlobalVariable* version = module_.getGlobalVariable("tessera_cpu_abi_version");
    if (!table || !version) return std::string("the CPU module has no kernel table");
    auto* table_type = llvm::cast<llvm::ArrayType>(table->getValueType());
    if (table_type->getNumElements() != kernels.size() + 1)
      return "the CPU module has " + std::to_string(table_type->getNumElements() - 1) + " kernels, the signatures " +
             std::to_string(kernels.size());
    // The runtime finds kernels by name, so the table's order is free; the
    // descriptor says how many entries it has.
    table->setLinkage(llvm::GlobalValue::PrivateLinkage);
    table->setName(prefix_ + "cpu_kernels");
    uint32_t cpu_abi = static_cast<uint32_t>(llvm::cast<llvm::ConstantInt>(version->getInitializer())->getZExtValue());
    version->eraseFromParent();

    llvm::Type* ptr = llvm::PointerType::getUnqual(context_);
    llvm::Type* i32 = llvm::Type::getInt32Ty(context_);
    llvm::Type* i64 = llvm::Type::getInt64Ty(context_);
    auto* parameter_type = llvm::StructType::get(context_, {ptr, i32, i32, i32, i32, ptr});
    auto* kernel_type =
        llvm::StructType::get(context_, {ptr, ptr, llvm::ArrayType::get(i32, 3), i64, i32, ptr, i32, ptr, ptr, ptr, ptr});
    auto* module_type = llvm::StructType::get(context_, {i32, i32, ptr, ptr, i64, ptr, i32, i32, ptr, ptr});

    auto signature_constant = [&](const AotKernel& k) {
      std::vector<llvm::Constant*> parameters;
      for (const AotParameter& p : k.parameters) {
        llvm::Constant* dims = llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(context_));
        if (!p.dims.empty()) dims = constant_array(i64, p.dims, "dims");
        parameters.push_back(llvm::ConstantStruct::get(
            parameter_type, {string(p.name), llvm::ConstantInt::get(i32, p.tensor), llvm::ConstantInt::get(i32, p.mut),
                             llvm::ConstantInt::get(i32, p.dtype_code), llvm::ConstantInt::get(i32, p.dims.size()), dims}));
      }
      std::vector<llvm::Constant*> symbols;
      for (const std::string& s : k.symbols) symbols.push_back(string(s));
      std::vector<llvm::Constant*> group;
      for (uint32_t g : k.group) group.push_back(llvm::ConstantInt::get(i32, g));
      llvm::Constant* autotune_of = llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(context_));
      llvm::Constant* autotune_point = autotune_of;
      llvm::Constant* autotune_key = autotune_of;
      if (!k.autotune_key.empty()) {
        std::string names;
        for (const std::string& name : k.autotune_key) names += (names.empty() ? "" : ",") + name;
        autotune_key = string(names);
      }
      if (!k.autotune_of.empty()) {
        std::string point;
        for (size_t i = 0; i < k.knobs.size() && i < k.knob_values.size(); ++i)
          point += (i ? ", " : "") + k.knobs[i] + "=" + std::to_string(k.knob_values[i]);
        autotune_of = string(k.autotune_of);
        autotune_point = string(point);
      }
      return llvm::ConstantStruct::get(
          kernel_type, {string(k.name), string(k.signature), llvm::ConstantArray::get(llvm::ArrayType::get(i32, 3), group),
                        llvm::ConstantInt::get(i64, k.static_shared_bytes), llvm::ConstantInt::get(i32, parameters.size()),
                        global_array(parameter_type, parameters, "parameters"), llvm::ConstantInt::get(i32, symbols.size()),
                        global_array(ptr, symbols, "symbols"), autotune_of, autotune_point, autotune_key});
    };
    std::vector<llvm::Constant*> kernel_constants;
    for (const AotKernel& k : kernels) kernel_constants.push_back(signature_constant(k));

    llvm::Constant* image = llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(context_));
    uint64_t image_bytes = 0;
    if (options_.image_kind != AotImageKind::None) {
      std::string bytes = options_.image;
      if (options_.image_kind == AotImageKind::Ptx) bytes.push_back('\0');
      auto* data = llvm::ConstantDataArray::getRaw(bytes, bytes.size(), llvm::Type::getInt8Ty(context_));
      auto* global = new llvm::GlobalVariable(module_, data->getType(), true, llvm::GlobalValue::PrivateLinkage, data,
                                              prefix_ + "gpu_image");
      global->setAlignment(llvm::Align(16));  // the driver wants fatbins 8-byte aligned
      image = global;
      image_bytes = bytes.size();
    }
    auto* cache = new llvm::GlobalVariable(module_, ptr, false, llvm::GlobalValue::InternalLinkage,
                                           llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(context_)),
                                           prefix_ + "cache");
    auto* descriptor = new llvm::GlobalVariable(
        module_, module_type, true, llvm::GlobalValue::ExternalLinkage,
        llvm::ConstantStruct::get(module_type,
                                  {llvm::ConstantInt::get(i32, TESS_AOT_ABI_VERSION),
                                   llvm::ConstantInt::get(i32, static_cast<uint32_t>(options_.image_kind)),
                                   string(options_.source), image, llvm::ConstantInt::get(i64, image_bytes), table,
                                   llvm::ConstantInt::get(i32, cpu_abi), llvm::ConstantInt::get(i32, kernels.size()),
                                   global_array(kernel_type, kernel_constants, "kernels"), cache}),
        aot_module_name(options_.name_space));
    descriptor->setAlignment(llvm::Align(8));

    // The launch stubs.
    auto* launch_type = llvm::FunctionType::get(i32, {ptr, i32, ptr, ptr, ptr, i64, ptr}, false);
    llvm::FunctionCallee launch = module_.getOrInsertFunction("tessAotLaunch", launch_type);
    auto* stub_type = llvm::FunctionType::get(i32, {ptr, ptr, ptr, i64, ptr}, false);
    for (size_t i = 0; i < kernels.size(); ++i) {
      if (kernels[i].generated) continue;  // launched by host code only
      auto* stub = llvm::Function::Create(stub_type, llvm::GlobalValue::ExternalLinkage,
                                          aot_stub_name(options_.name_space, kernels[i].name), module_);
      stub->addFnAttr(llvm::Attribute::NoUnwind);
      llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context_, "entry", stub));
      llvm::CallInst* call =
          builder.CreateCall(launch, {descriptor, builder.getInt32(static_cast<uint32_t>(i)), stub->getArg(0),
                                      stub->getArg(1), stub->getArg(2), stub->getArg(3), stub->getArg(4)});
      call->setTailCall();
      builder.CreateRet(call);
    }

    // @jit functions: their host code stays internal; an entry per function
    // passes the module, its signature and its code to tessAotCall.
    for (const char* name : {"tessera_host_functions", "tessera_host_abi_version"})
      if (llvm::GlobalVariable* g = module_.getGlobalVariable(name)) g->eraseFromParent();
    auto* call_type = llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr, ptr, ptr, ptr}, false);
    llvm::FunctionCallee call_host = module_.getOrInsertFunction("tessAotCall", call_type);
    auto* entry_type = llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr}, false);
    // A function on a mesh: its entry takes the caller's mesh, after the
    // stream, and passes it with the function's mesh description to
    // tessAotCallOnMesh.
    auto* mesh_call_type = llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr}, false);
    llvm::FunctionCallee call_on_mesh = module_.getOrInsertFunction("tessAotCallOnMesh", mesh_call_type);
    auto* mesh_entry_type = llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr, ptr}, false);
    for (const AotKernel& f : functions) {
      llvm::Function* host = module_.getFunction("__tessera_host_" + f.name);
      if (!host) return "the CPU module has no host code for @jit function '" + f.name + "'";
      host->setLinkage(llvm::GlobalValue::InternalLinkage);
      auto* signature = new llvm::GlobalVariable(module_, kernel_type, true, llvm::GlobalValue::PrivateLinkage,
                                                 signature_constant(f), prefix_ + "function");
      bool on_mesh = !f.mesh.empty();
      auto* entry = llvm::Function::Create(on_mesh ? mesh_entry_type : entry_type, llvm::GlobalValue::ExternalLinkage,
                                           aot_function_name(options_.name_space, f.name), module_);
      entry->addFnAttr(llvm::Attribute::NoUnwind);
      llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context_, "entry", entry));
      llvm::CallInst* call =
          on_mesh ? builder.CreateCall(call_on_mesh, {descriptor, signature, host, string(f.mesh), entry->getArg(2),
                                                      entry->getArg(0), entry->getArg(1), entry->getArg(3),
                                                      entry->getArg(4)})
                  : builder.CreateCall(call_host, {descriptor, signature, host, entry->getArg(0), entry->getArg(1),
                                                   entry->getArg(2), entry->getArg(3)});
      call->setTailCall();
      builder.CreateRet(call);
    }
    return std::nullopt;
  }

 private:
  llvm::Constant* string(const std::string& text) {
    auto it = strings_.find(text);
    if (it != strings_.end()) return it->second;
    auto* data = llvm::ConstantDataArray::getString(context_, text);
    auto* global = new llvm::GlobalVariable(module_, data->getType(), true, llvm::GlobalValue::PrivateLinkage, data,
                                            prefix_ + "str");
    global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return strings_[text] = global;
  }
  llvm::Constant* constant_array(llvm::Type* element, const std::vector<int64_t>& values, const char* what) {
    std::vector<llvm::Constant*> constants;
    for (int64_t v : values) constants.push_back(llvm::ConstantInt::getSigned(element, v));
    return global_array(element, constants, what);
  }
  llvm::Constant* global_array(llvm::Type* element, const std::vector<llvm::Constant*>& values, const char* what) {
    if (values.empty()) return llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(context_));
    auto* type = llvm::ArrayType::get(element, values.size());
    return new llvm::GlobalVariable(module_, type, true, llvm::GlobalValue::PrivateLinkage,
                                    llvm::ConstantArray::get(type, values), prefix_ + what);
  }

  llvm::Module& module_;
  llvm::LLVMContext& context_;
  const AotObjectOptions& options_;
  std::string prefix_;
  std::map<std::string, llvm::Constant*> strings_;
};

}  // namespace

std::string aot_symbol_prefix(const std::string& name_space) {
  return "tessera_aot_" + std::to_string(name_space.size()) + name_space + "_";
}
std::string aot_stub_name(const std::string& name_space, const std::string& kernel) {
  return aot_symbol_prefix(name_space) + "k_" + kernel;
}
std::string aot_module_name(const std::string& name_space) { return aot_symbol_prefix(name_space) + "module"; }
std::string aot_function_name(const std::string& name_space, const std::string& function) {
  return aot_symbol_prefix(name_space) + "f_" + function;
}

std::optional<std::string> emit_aot_object(ir::Operation* module, const std::vector<AotKernel>& kernels,
                                           const std::vector<AotKernel>& functions, const AotObjectOptions& options,
                                           DiagnosticEngine& diags, std::string& object, bool& reported) {
  reported = false;
  HostTarget target;
  if (auto error = detect_host_target(target)) return error;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvm_module = emit_host_module(module, context, target, diags, options.bounds_check);
  if (!llvm_module) {
    reported = true;
    return std::nullopt;
  }
  llvm_module->setModuleIdentifier(options.source);
  if (auto error = ObjectBuilder(*llvm_module, options).build(kernels, functions)) return error;
  return emit_host_object(*llvm_module, options.opt_level, object, options.host_cpu);
}

}  // namespace tessera::codegen

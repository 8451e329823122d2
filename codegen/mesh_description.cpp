// Mesh descriptions (mesh_description.h).
#include "codegen/mesh_description.h"

namespace tessera::codegen {

std::string mesh_description(ir::Attribute mesh) {
  std::string out;
  for (size_t part = 0; part < 3 && part < mesh.size(); ++part) {
    if (part) out += ";";
    for (size_t i = 0; i < mesh[part].size(); ++i) {
      if (i) out += ",";
      ir::Attribute e = mesh[part][i];
      out += e.is(ir::AttributeKind::Integer) ? std::to_string(e.int_value()) : std::string(e.string_value());
    }
  }
  return out;
}

std::string function_mesh_description(ir::Operation* function) {
  std::string found;
  function->walk([&](ir::Operation* op) {
    if (!found.empty() || (op->kind() != ir::OpKind::HostMesh && op->kind() != ir::OpKind::HostCollective &&
                            op->kind() != ir::OpKind::HostCollectiveStart)) return;
    if (ir::Attribute mesh = op->attr("mesh")) found = mesh_description(mesh);
  }, ir::WalkOrder::PreOrder);
  return found;
}

}  // namespace tessera::codegen

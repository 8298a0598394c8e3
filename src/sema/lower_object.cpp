// Objects of device classes (@tack.data_oriented) in kernels. An object is flattened: its arrays
// and scalars are parameters of the kernel like any argument's ("cells.connectivity"), its
// constants are compiled in, and its methods are @tack.func bodies inlined with the object bound
// to `self`. Nothing of it reaches the IR, so every backend compiles it as the same kernel
// written with plain arguments.
#include <fmt/format.h>

#include <algorithm>

#include "sema/lowerer.hpp"

namespace tack::sema {

using ir::Type;

const ObjectType::Attribute* ObjectType::find(const std::string& name) const {
  auto it = std::lower_bound(attributes.begin(), attributes.end(), name,
                             [](const Attribute& a, const std::string& n) { return a.name < n; });
  return it != attributes.end() && it->name == name ? &*it : nullptr;
}

std::vector<Leaf> leaves(std::span<const std::string> names, std::span<const ArgType> args) {
  std::vector<Leaf> out;
  std::function<void(const std::string&, const ArgType&)> visit = [&](const std::string& name,
                                                                      const ArgType& t) {
    if (t.kind != ArgType::Kind::Object) {
      out.push_back({name, &t});
      return;
    }
    for (const ObjectType::Attribute& a : t.object->attributes) {
      if (a.kind == ObjectType::Attribute::Kind::Value) visit(name + "." + a.name, a.type);
      if (a.kind == ObjectType::Attribute::Kind::Tuple)
        for (size_t k = 0; k < a.elements.size(); ++k)
          out.push_back({fmt::format("{}.{}[{}]", name, a.name, k), &a.elements[k]});
    }
  };
  for (size_t i = 0; i < args.size(); ++i) visit(names[i], args[i]);
  return out;
}

int Lowerer::bind_object(const ObjectType& type, const std::string& path) {
  int id = static_cast<int>(objects_.size());
  objects_.push_back({&type, path, std::vector<int>(type.attributes.size(), -1)});
  for (size_t i = 0; i < type.attributes.size(); ++i) {
    const ObjectType::Attribute& a = type.attributes[i];
    if (a.kind == ObjectType::Attribute::Kind::Tuple) {
      // Its numbers, one parameter each; the slot is the first.
      for (size_t k = 0; k < a.elements.size(); ++k) {
        k_.params.push_back(
            {fmt::format("{}.{}[{}]", path, a.name, k), Type::scalar(a.elements[k].dtype), false});
        leaf_types_.push_back(&a.elements[k]);
      }
      objects_[id].slots[i] = static_cast<int>(k_.params.size() - a.elements.size());
      continue;
    }
    if (a.kind != ObjectType::Attribute::Kind::Value) continue;
    std::string name = path + "." + a.name;
    int slot;
    if (a.type.kind == ArgType::Kind::Object) {
      slot = bind_object(*a.type.object, name);
    } else {
      Type t = a.type.kind == ArgType::Kind::Array ? Type::array(a.type.dtype, a.type.rank)
                                                   : Type::scalar(a.type.dtype);
      k_.params.push_back({name, t, false});
      leaf_types_.push_back(&a.type);
      slot = static_cast<int>(k_.params.size()) - 1;
    }
    objects_[id].slots[i] = slot;
  }
  return id;
}

const ObjectType::Attribute* Lowerer::member(const ast::Expr& e, int* slot) const {
  if (e.kind != ast::Expr::Kind::Attribute) return nullptr;
  int o = object_of(*e.operand);
  if (o < 0) return nullptr;
  const ObjectType& t = *objects_[o].type;
  const ObjectType::Attribute* a = t.find(e.name);
  if (!a) return nullptr;
  *slot = objects_[o].slots[a - t.attributes.data()];
  return a;
}

int Lowerer::object_of(const ast::Expr& e) const {
  if (e.kind == ast::Expr::Kind::Name) {
    if (is_local(e.name)) return -1;
    auto it = object_names_.find(e.name);
    return it == object_names_.end() ? -1 : it->second;
  }
  int slot;
  const ObjectType::Attribute* a = member(e, &slot);
  bool nested =
      a && a->kind == ObjectType::Attribute::Kind::Value && a->type.kind == ArgType::Kind::Object;
  return nested ? slot : -1;
}

std::string Lowerer::describe_object(int object) const {
  return fmt::format("'{}' (an object of class '{}')", objects_[object].path,
                     objects_[object].type->cls->name());
}

void Lowerer::fail_unsupported(int object, const ObjectType::Attribute& a, SourceLoc loc) {
  fail_arg(loc, fmt::format("attribute '{}' of class '{}' is {}, which a kernel cannot take: an "
                            "object's attributes are arrays, numbers, objects of device classes "
                            "and @tack.func functions",
                            a.name, objects_[object].type->cls->name(), a.what));
}

Value Lowerer::object_attribute(int object, const std::string& name, SourceLoc loc) {
  const ObjectRef& ref = objects_[object];
  const ObjectType& t = *ref.type;
  const ObjectType::Attribute* a = t.find(name);
  std::string what = fmt::format("{}.{}", ref.path, name);
  if (!a) {
    if (std::optional<lang::Method> m = t.cls->method(name))
      fail(loc, fmt::format("'{}' is a method of class '{}', used as a value", what, t.cls->name()),
           fmt::format("call it: {}(...)", what));
    fail_arg(loc, fmt::format("{} has no attribute '{}'", describe_object(object), name));
  }
  int slot = ref.slots[a - t.attributes.data()];
  switch (a->kind) {
    case ObjectType::Attribute::Kind::Constant:
      return constant(a->constant, loc);
    case ObjectType::Attribute::Kind::Function:
      fail(loc, fmt::format("'{}' is a function, used as a value", what),
           fmt::format("call it: {}(...)", what));
    case ObjectType::Attribute::Kind::Unsupported:
      fail_unsupported(object, *a, loc);
    case ObjectType::Attribute::Kind::Tuple:
      fail(loc,
           fmt::format("'{}' is a tuple of {} numbers, used as a value", what, a->elements.size()),
           fmt::format("read one of them: {}[0]", what));
    case ObjectType::Attribute::Kind::Value:
      break;
  }
  if (a->type.kind == ArgType::Kind::Object)
    fail(loc,
         fmt::format("'{}' is an object of class '{}', used as a value", what,
                     a->type.object->cls->name()),
         fmt::format("read its attributes or call its methods: {}.name", what));
  const ir::Param& p = k_.params[slot];
  if (p.type.is_array())
    fail_arg(loc, fmt::format("attribute '{}' is an array but is used as a scalar value; index it "
                              "({}[i]) or read its size ({}.shape[0])",
                              what, what, what));
  return {ir::make_param(slot, p.type, loc)};
}

const ObjectType::Attribute* Lowerer::object_tuple(const ast::Expr& e, int* slot) const {
  const ObjectType::Attribute* a = member(e, slot);
  return a && a->kind == ObjectType::Attribute::Kind::Tuple ? a : nullptr;
}

Value Lowerer::tuple_item(const ast::Expr& subscript) {
  int first = -1;
  const ObjectType::Attribute& a = *object_tuple(*subscript.operand, &first);
  std::string what =
      fmt::format("{}.{}", objects_[object_of(*subscript.operand->operand)].path, a.name);
  int64_t n = static_cast<int64_t>(a.elements.size());
  Value k = subscript.args.size() == 1 ? expr(*subscript.args[0]) : Value{};
  if (k.weak != Value::Weak::Int)
    fail(subscript.loc, fmt::format("'{}' is a tuple: it is indexed by one constant integer", what),
         fmt::format("write {}[0]", what));
  int64_t i = static_cast<int64_t>(k.e->int_bits);
  if (i < -n || i >= n)
    fail_arg(subscript.loc,
             fmt::format("index {} is out of range for '{}', a tuple of {} numbers", i, what, n));
  int param = first + static_cast<int>(i < 0 ? i + n : i);
  return {ir::make_param(param, k_.params[param].type, subscript.loc)};
}

Lowerer::Callee Lowerer::object_method(int object, const std::string& name, SourceLoc loc) {
  const ObjectRef& ref = objects_[object];
  const ObjectType& t = *ref.type;
  std::string what = fmt::format("{}.{}", t.cls->name(), name);
  if (const ObjectType::Attribute* a = t.find(name)) {
    // An attribute holding a @tack.func is called like a method, without the object.
    if (a->kind == ObjectType::Attribute::Kind::Function)
      return {a->function.def, a->function.module.get(), -1, a->function.def->name};
    if (a->kind == ObjectType::Attribute::Kind::Unsupported) fail_unsupported(object, *a, loc);
    fail(loc, fmt::format("'{}.{}' is not a function", ref.path, name),
         "call a @tack.func method of the object, or read the attribute without calling it");
  }
  std::optional<lang::Method> m = t.cls->method(name);
  if (!m)
    fail(loc, fmt::format("class '{}' has no method '{}'", t.cls->name(), name),
         fmt::format("define it in the class as a @tack.func: def {}(self, ...)", name));
  switch (m->kind) {
    case lang::Method::Kind::Func:
      return {m->def, m->module, object, what};
    case lang::Method::Kind::Static:
      return {m->def, m->module, -1, what};
    case lang::Method::Kind::Kernel:
      fail(loc, fmt::format("'{}' is a kernel, and a kernel cannot be called from a kernel", what),
           "move the shared code into a @tack.func method and call that");
    case lang::Method::Kind::Host:
      break;
  }
  fail(loc, fmt::format("'{}' is not a @tack.func, so a kernel cannot call it", what),
       "decorate it with @tack.func (and @staticmethod when it takes no self), or compute its "
       "result on the host and pass it in an attribute");
}

Value Lowerer::object_subscript(int object, const ast::Expr& subscript) {
  const ObjectType& t = *objects_[object].type;
  if (!t.find("__getitem__") && !t.cls->method("__getitem__"))
    fail(subscript.loc,
         fmt::format("{} cannot be indexed: class '{}' has no __getitem__", describe_object(object),
                     t.cls->name()),
         "define it in the class: @tack.func def __getitem__(self, i): ...");
  return call_value(object_method(object, "__getitem__", subscript.loc),
                    subscript_indices(subscript), subscript.loc);
}

Value Lowerer::object_len(int object, SourceLoc loc) {
  const ObjectType& t = *objects_[object].type;
  if (!t.find("__len__") && !t.cls->method("__len__"))
    fail(loc,
         fmt::format("len() of {}: class '{}' has no __len__", describe_object(object),
                     t.cls->name()),
         "define it in the class: @tack.func def __len__(self): return ...");
  return call_value(object_method(object, "__len__", loc), {}, loc);
}

void Lowerer::object_loop(int object, const ast::Stmt& s) {
  const ast::Expr& it = *s.iter;
  const ObjectType& t = *objects_[object].type;
  const std::vector<std::string>& names = t.cls->iterate();
  if (names.empty())
    fail(it.loc,
         fmt::format("{} cannot be the parallel loop's iterable: class '{}' does not declare "
                     "__tack_iterate__",
                     describe_object(object), t.cls->name()),
         "declare the attributes that count its elements in the class, fastest first: "
         "__tack_iterate__ = (\"n\",), or iterate over range(...)");
  const ast::Expr& target = *s.targets[0];
  if (target.kind != ast::Expr::Kind::Name)
    fail(target.loc, fmt::format("the loop over {} has one loop variable", describe_object(object)),
         names.size() == 1 ? "write for c in cells: (c is the element's index)"
                           : "write for c in cells: (c is a vector of the indices, c.x fastest)");
  if (is_local(target.name) || is_param(target.name))
    fail(target.loc, fmt::format("the loop variable '{}' is already bound", target.name),
         "choose a fresh name for the loop variable");
  // The extents, slowest first as tack.ndrange takes them; the loop variable is the index (one
  // name) or a vector of the indices, fastest first (c.x, c.y, c.z).
  CompositeLocal index{{}, static_cast<int>(names.size()), 1};
  for (size_t d = names.size(); d-- > 0;) {
    ir::LoopDim dim;
    dim.start = ir::make_int(Type::i64(), 0, it.loc);
    dim.stop = host_bound(object_attribute(object, names[d], it.loc), it.loc);
    dim.step = ir::make_int(Type::i64(), 1, it.loc);
    dim.var = names.size() == 1
                  ? new_local(target.name, Type::i64())
                  : new_local(fmt::format("${}.{}", target.name, "xyz"[d]), Type::i64());
    index.ids.insert(index.ids.begin(), dim.var);
    k_.dims.push_back(std::move(dim));
  }
  if (names.size() > 1) composites_[target.name] = std::move(index);
}

}  // namespace tack::sema

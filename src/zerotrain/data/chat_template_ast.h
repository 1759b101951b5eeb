// The syntax tree of a chat template: expressions (literals, names, attributes, subscripts and
// slices, calls with keyword arguments, filters, tests, operators, conditional expressions) and
// statements (text, output, if/elif/else, for with unpacking, a filter and an else branch, set of
// a name or a namespace attribute, break/continue, transformers' generation block). Built by
// chat_template_parser.h, run by chat_template_render.h.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "zerotrain/data/chat_template_lexer.h"
#include "zerotrain/data/chat_template_value.h"

namespace zt::data {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct CallArgs {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
};

struct Expr {
  enum class Kind {
    Literal,      // value
    Name,         // name
    ListLit,      // items
    DictLit,      // items as key, value pairs
    Attribute,    // object.name
    Subscript,    // object[index]
    Slice,        // object[start:stop:step] (null parts absent)
    Call,         // object(args)
    Filter,       // object | name(args)
    Test,         // object is [not] name(args)
    Unary,        // op object ("not", "-", "+")
    Binary,       // left op right
    Conditional,  // then if cond else otherwise
  };
  Kind kind;
  SourcePos pos;
  TemplateValue value;          // Literal
  std::string name;             // Name, Attribute, Filter, Test; Unary/Binary: the operator
  bool negated = false;         // Test: "is not"
  ExprPtr object, left, right;  // object: Attribute..Unary; left/right: Binary; Conditional:
                                // left = then, right = otherwise, object = condition
  ExprPtr start, stop, step;    // Slice
  std::vector<ExprPtr> items;   // ListLit; DictLit: key, value, key, value, ...
  CallArgs args;                // Call, Filter, Test
  int height = 1;               // of the tree below and including this node (the parser bounds it)
};

struct Stmt;
using StmtList = std::vector<std::unique_ptr<Stmt>>;

struct Stmt {
  enum class Kind { Text, Output, If, For, Set, Break, Continue, Block };
  Kind kind;
  SourcePos pos;
  std::string text;                                    // Text
  ExprPtr expr;                                        // Output, Set: the value; For: iterable
  std::vector<std::pair<ExprPtr, StmtList>> branches;  // If: condition (null for else), body
  std::vector<std::string> targets;                    // For: loop names; Set: name[, attr]
  ExprPtr filter;                                      // For: the "if" condition, or null
  StmtList body, else_body;                            // For; Block: body
};

}  // namespace zt::data

// XmlDoc: pugixml parsing and attribute reading with errors that name file, line and expectation.
#include "topology/xml_doc.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "topology/pci.h"

namespace myriad {
namespace {

const char* expectation(pugi::xml_parse_status status) {
  switch (status) {
    case pugi::status_no_document_element: return "expected a root element";
    case pugi::status_end_element_mismatch: return "expected the closing tag of the open element";
    case pugi::status_bad_start_element: return "expected a well-formed start tag";
    case pugi::status_bad_end_element: return "expected a well-formed end tag";
    case pugi::status_bad_attribute: return "expected name=\"value\" attributes";
    case pugi::status_bad_comment: return "expected a comment closed by -->";
    case pugi::status_bad_pi: return "expected a declaration closed by ?>";
    case pugi::status_unrecognized_tag: return "expected an element, comment or declaration after '<'";
    default: return "expected well-formed XML";
  }
}

}  // namespace

Result<XmlDoc> XmlDoc::parse(std::string_view text, std::string name) {
  XmlDoc d;
  d.doc_ = std::make_shared<pugi::xml_document>();
  d.text_ = std::string(text);
  d.name_ = std::move(name);
  pugi::xml_parse_result r =
      d.doc_->load_buffer(d.text_.data(), d.text_.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!r) {
    return invalidArgument(d.name_ + ":" + std::to_string(d.lineOf(r.offset)) + ": malformed XML: " + r.description() +
                           ", " + expectation(r.status));
  }
  if (!d.root()) return invalidArgument(d.name_ + ":1: " + expectation(pugi::status_no_document_element));
  return d;
}

int XmlDoc::lineOf(ptrdiff_t offset) const {
  size_t end = std::min(text_.size(), static_cast<size_t>(std::max<ptrdiff_t>(offset, 0)));
  return 1 + static_cast<int>(std::count(text_.begin(), text_.begin() + static_cast<ptrdiff_t>(end), '\n'));
}

Status XmlDoc::error(pugi::xml_node at, const std::string& what) const {
  return invalidArgument(name_ + ":" + std::to_string(lineOf(at.offset_debug())) + ": " + what);
}

Result<int> XmlDoc::intAttr(pugi::xml_node node, const char* attr, int fallback) const {
  pugi::xml_attribute a = node.attribute(attr);
  if (!a) return fallback;
  std::string_view v = a.value();
  int out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size()) {
    return error(node, std::string("<") + node.name() + "> " + attr + "=\"" + a.value() + "\": expected an integer");
  }
  return out;
}

Result<uint32_t> XmlDoc::hexAttr(pugi::xml_node node, const char* attr, uint32_t max) const {
  pugi::xml_attribute a = node.attribute(attr);
  if (!a) return 0u;
  std::optional<uint32_t> v = parseHex(a.value(), max);
  if (!v) {
    return error(node, std::string("<") + node.name() + "> " + attr + "=\"" + a.value() +
                           "\": expected a hexadecimal number of at most " + std::to_string(max > 0xffff ? 6 : 4) +
                           " digits");
  }
  return *v;
}

Result<double> XmlDoc::doubleAttr(pugi::xml_node node, const char* attr) const {
  pugi::xml_attribute a = node.attribute(attr);
  if (!a) return 0.0;
  std::string_view v = a.value();
  double out = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(out) || out < 0) {
    return error(
        node, std::string("<") + node.name() + "> " + attr + "=\"" + a.value() + "\": expected a non-negative number");
  }
  return out;
}

Result<std::string> XmlDoc::busIdAttr(pugi::xml_node node, const char* attr) const {
  pugi::xml_attribute a = node.attribute(attr);
  std::optional<std::string> id = a ? normalizeBusId(a.value()) : std::nullopt;
  if (!id) {
    return error(node, std::string("<") + node.name() + "> " + attr + "=\"" + a.value() +
                           "\": expected a PCI bus id like 0000:0f:00.0");
  }
  return *id;
}

}  // namespace myriad

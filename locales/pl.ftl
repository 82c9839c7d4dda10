# signupd po polsku: każde słowo, które odwiedzający czyta na stronach i w obu wiadomościach e-mail.
# Identyfikatory wiadomości i zmienne ($list, $site, ...) są takie jak w en.ftl.
#
# Rejestr: bez „Ty” i bez „Pan/Pani” – formy bezosobowe („Prosimy wpisać…”, „Link został wysłany”),
# przyciski w pierwszej osobie („Zapisuję się”, „Potwierdzam”), jak w polskich formularzach newsletterów.
# Słowniczek:
#   sign up / signup        - zapisać się / zapis (na listę)
#   confirm                 - potwierdzić / potwierdzenie
#   list                    - lista
#   remove (my address)     - usunąć (adres); dane są „usuwane”
#   preferences             - ustawienia / strona ustawień
#   email address           - adres e-mail (krótko: adres)
#   link                    - link
#   subscription            - zapis (nie „subskrypcja”)
#   unsubscribe             - wypisać się
#   mail                    - e-mail / wiadomość
#   one-way hash            - skrót jednokierunkowy (hash)

## Mail dates

# Nazwy miesięcy w dopełniaczu, jak po numerze dnia: „7 grudnia 2026”.
date-format = { $day } { $month } { $year }, { $time } UTC
date-month-1 = stycznia
date-month-2 = lutego
date-month-3 = marca
date-month-4 = kwietnia
date-month-5 = maja
date-month-6 = czerwca
date-month-7 = lipca
date-month-8 = sierpnia
date-month-9 = września
date-month-10 = października
date-month-11 = listopada
date-month-12 = grudnia

## Durations

# Biernik, bo czas stoi po „przez”, „na”, „co najwyżej”, „po”: „na 1 godzinę”, „przez 30 dni”.
duration-second =
    { $n ->
        [one] { $n } sekundę
        [few] { $n } sekundy
        [many] { $n } sekund
       *[other] { $n } sekundy
    }
duration-minute =
    { $n ->
        [one] { $n } minutę
        [few] { $n } minuty
        [many] { $n } minut
       *[other] { $n } minuty
    }
duration-hour =
    { $n ->
        [one] { $n } godzinę
        [few] { $n } godziny
        [many] { $n } godzin
       *[other] { $n } godziny
    }
duration-day =
    { $n ->
        [one] { $n } dzień
        [few] { $n } dni
        [many] { $n } dni
       *[other] { $n } dnia
    }
duration-and = { $init } i { $last }
duration-separator = {", "}
duration-per = { $n } na { $duration }

## page

page-back-to = Powrót do { $site }
page-privacy = Co przechowujemy i jak długo
page-languages = W innych językach:

## errors

errors-unavailable-title = Prosimy spróbować ponownie
errors-unavailable = Nie udało się tego teraz wykonać. Prosimy spróbować ponownie za minutę.
errors-not-found-title = Nie znaleziono
errors-not-found = Pod tym adresem nie ma formularza zapisu.
errors-not-found-link = Przejdź do formularza zapisu
errors-incomplete-title = Ten link jest niepełny
errors-incomplete = Link wygląda na ucięty lub zmieniony. Wystarczy otworzyć go ponownie z wiadomości e-mail albo skopiować cały adres do przeglądarki.
errors-refused-title = Nie udało się tego wykonać
errors-refused = Nie udało się odczytać żądania. Prosimy wrócić na stronę i spróbować ponownie.
errors-timeout = Żądanie nie dotarło na czas. Prosimy spróbować ponownie.
errors-internal = Coś poszło nie tak po naszej stronie. Prosimy spróbować ponownie za minutę.

## signup

signup-title = Zapis: { $list }
signup-heading = Zapis na listę { $list }
signup-intro = Prosimy wpisać adres e-mail. Wyślemy na niego link – zapis będzie ważny dopiero po otwarciu linku i potwierdzeniu.
signup-email-label = Adres e-mail
signup-honeypot-label = Tego pola nie należy wypełniać
signup-submit = Zapisuję się
signup-choose-title = Zapis
signup-choose = Wybór listy:
signup-several-title = Zapis
signup-several-heading = Zapis
signup-lists-legend = Które listy mają przychodzić?
signup-several-consent = Chcę otrzymywać e-mailem zaznaczone listy. Z każdej z nich mogę się w dowolnej chwili wypisać.
signup-no-list-ticked = Prosimy zaznaczyć co najmniej jedną listę.
signup-optional = opcjonalnie
signup-choose-option = Wybierz
signup-field-missing = Prosimy wypełnić pole „{ $field }”.
signup-field-invalid = Prosimy sprawdzić pole „{ $field }”: wybrać jedną z opcji albo wpisać krótszy tekst w jednym wierszu.
signup-unreadable = Nie udało się odczytać formularza. Prosimy spróbować ponownie.
signup-unsupported = Formularz został wysłany w formacie, którego ta usługa nie obsługuje.
signup-too-large = Formularz był za duży. Wystarczy wpisać sam adres e-mail.
signup-origin-not-allowed = Tego formularza nie można używać na stronie, z której został wysłany.
signup-invalid-email = Prosimy wpisać prawidłowy adres e-mail, np. imie@example.com.
signup-consent-required = Aby otrzymywać te e-maile, prosimy zaznaczyć pole zgody.
signup-unknown-list = Ten formularz wskazuje listę, która nie istnieje.
signup-invalid-source = Ten formularz wysyła źródło, którego ta usługa nie przyjmuje. Prosimy powiadomić właściciela strony.
signup-unknown-tag = Ten formularz wysyła tag, którego lista nie zna. Prosimy powiadomić właściciela strony.
signup-domain-not-allowed = Adresów z tej domeny nie można tu użyć do zapisu. Prosimy podać inny adres e-mail.
signup-rate-limited = Zbyt wiele zapisów z tej sieci. Prosimy spróbować ponownie później.
signup-storage-unavailable = Nie udało się teraz zapisać zgłoszenia. Prosimy spróbować ponownie za minutę.

## check inbox

check-inbox-title = Prosimy sprawdzić skrzynkę odbiorczą
check-inbox-sent = Jeśli ten adres może odbierać pocztę, wiadomość jest już w drodze. Wystarczy otworzyć zawarty w niej link i potwierdzić przyciskiem.
check-inbox-sent-for = Jeśli ten adres może odbierać pocztę, wiadomość w sprawie listy { $list } jest już w drodze. Wystarczy otworzyć zawarty w niej link i potwierdzić przyciskiem.
check-inbox-nothing-arrived = Po kilku minutach nic nie dotarło? Warto zajrzeć do folderu ze spamem. Link działa tylko przez pewien czas; zawsze można po prostu zapisać się ponownie.
check-inbox-open-inbox = Otwórz { $provider }

## surge

surge-title = Jeszcze jeden krok
surge-unusual = Ta strona ma w tej chwili nietypowo duży ruch, dlatego wysyła e-maile z potwierdzeniem tylko do osób, które o nie poproszą.
surge-ask = Wystarczy nacisnąć przycisk, a e-mail z potwierdzeniem zostanie wysłany.
surge-button = Wyślij mi e-mail z potwierdzeniem
surge-not-you = Zapisu dokonał ktoś inny? Wystarczy zamknąć tę stronę – nic nie zostanie wysłane.

## confirm

confirm-title = Potwierdzenie zapisu: { $list }
confirm-heading = Potwierdzenie zapisu
confirm-intro = Otrzymaliśmy prośbę o przesyłanie listy { $list } na ten adres e-mail. Zapis wystarczy potwierdzić przyciskiem; do tego czasu nic nie zostanie wysłane.
confirm-email-label = Adres e-mail
confirm-email-hint = Prosimy wpisać adres, na który przyszła ta wiadomość. Dzięki temu programy automatycznie sprawdzające linki nie potwierdzą zapisu zamiast właściciela adresu.
confirm-button = Potwierdzam zapis
confirm-not-you = To pomyłka? Wystarczy zamknąć tę stronę – bez potwierdzenia nic więcej nie przyjdzie.
confirm-wrong-address = To nie jest adres, na który wysłano ten link. Prosimy wpisać go ponownie.
confirm-already-title = Już potwierdzono
confirm-already = Ten adres jest już zapisany na listę { $list }. Nie trzeba nic więcej robić.
confirm-done-title = Zapis potwierdzony
confirm-done = Dziękujemy. Adres został zapisany na listę { $list }.
confirm-done-any = Dziękujemy. Adres został zapisany.
confirm-expired-title = Ten link wygasł
confirm-expired = Link potwierdzający jest już nieważny: wygasł, został zastąpiony nowszą wiadomością albo został już użyty. Można zapisać się ponownie.
confirm-sign-up-again = Zapisz się ponownie

## manage

manage-title = Usunięcie adresu
manage-intro = Adres zostanie usunięty z listy { $list }. Nie będą już z niej przychodzić żadne e-maile.
manage-intro-any = Adres zostanie usunięty z listy, do której należy ten link. Nie będą już z niej przychodzić żadne e-maile.
manage-button = Usuń mój adres
manage-removed-title = Adres usunięty
manage-removed = Adres został usunięty z listy { $list }. Nie będą już z niej przychodzić żadne e-maile.
manage-removed-any = Adres został usunięty. Z tej listy nie będą już przychodzić żadne e-maile.

## preferences

preferences-title = Ustawienia e-maili
preferences-intro = Wystarczy zaznaczyć listy od { $site }, które mają przychodzić, odznaczyć te niepotrzebne i zapisać zmiany.
preferences-legend = Listy
preferences-pending = Oczekuje na potwierdzenie.
preferences-kept = Dane podane przy zapisie:
preferences-save = Zapisz zmiany
preferences-remove-all-heading = Usunięcie adresu
preferences-remove-all-intro = Można też od razu usunąć adres ze wszystkich tych list. Nie będą już z nich przychodzić żadne e-maile.
preferences-remove-all = Usuń mnie ze wszystkich
preferences-saved-title = Ustawienia zapisane
preferences-saved = Wybór dla { $site } został zapisany. E-maile będą przychodzić tylko z zaznaczonych list.
preferences-saved-any = Wybór został zapisany. E-maile będą przychodzić tylko z zaznaczonych list.
preferences-unreadable-title = Nie udało się odczytać formularza
preferences-unreadable = Nic nie zostało zmienione. Prosimy ponownie otworzyć link z wiadomości e-mail i jeszcze raz zapisać zmiany.

## privacy

privacy-title = Prywatność: { $list }
privacy-heading = Co dzieje się z adresem
privacy-intro = Ta strona opisuje, co jest przechowywane po zapisie na listę { $list } i jak długo.
privacy-stored-heading = Co jest przechowywane
privacy-stored = Adres e-mail, lista, wersja zaakceptowanej treści zgody ({ $version }) i sama ta treść, czas zapisu oraz czas i sposób potwierdzenia (w tym to, ile czasu minęło od wysłania wiadomości). Jeśli formularz je podaje, także miejsce, z którego nastąpił zapis (np. „homepage-footer”), i wymienione w nim tematy.
privacy-fields = Formularz pyta też o: { $fields }. Wpisane tam dane są przechowywane razem z zapisem, tak długo jak pozostałe, i wyświetlane na stronie ustawień.
privacy-no-ip = Adres IP nie jest przechowywany. Aby ograniczyć nadużycia, signupd liczy zapisy z każdej sieci pod jednokierunkowym skrótem (hashem) sieci, nigdy pod samym adresem: { $limits }. Licznik obejmuje najwyżej { $duration } i jest usuwany przy najbliższym czyszczeniu po tym czasie.
privacy-mail-heading = Wiadomości e-mail
privacy-mail = Przychodzi jeden e-mail z linkiem potwierdzającym, a po ponownym zapisie najwyżej jeden nowy na { $duration }. Do czasu potwierdzenia nic innego nie jest wysyłane.
privacy-unconfirmed = Bez potwierdzenia link przestaje działać { $duration } po ostatniej wiadomości, a adres jest usuwany przy najbliższym czyszczeniu po tym czasie.
privacy-neighbourhood = Wszystkie sieci jednego sąsiedztwa (bloku adresów jednego dostawcy) są ponadto liczone razem: { $limits }.
privacy-never-mailed = Jeśli e-maila z potwierdzeniem nie udało się jeszcze wysłać (gdy wiele osób zapisuje się naraz), adres jest usuwany { $duration } po zapisie – niezależnie od tego, czy wiadomość wyszła.
privacy-cap =
    Aby nikt nie mógł zasypać czyjejś skrzynki wiadomościami, wpisując jej adres w wielu formularzach, na jeden adres wysyłamy w ciągu 24 godzin najwyżej { $n ->
        [one] { $n } e-mail potwierdzający
        [few] { $n } e-maile potwierdzające
        [many] { $n } e-maili potwierdzających
       *[other] { $n } e-maila potwierdzającego
    } – łącznie ze wszystkich list tej usługi. W tym celu jednokierunkowy skrót adresu jest przechowywany przez jeden dzień razem z godziną każdej takiej wiadomości.
privacy-reputation = Po potwierdzeniu jednokierunkowy skrót sieci (bloku adresów jednego dostawcy) jest przechowywany wraz z datą przez { $duration }: gdy wiele osób zapisuje się naraz, e-maile do sieci, z których ludzie potwierdzają zapisy, wychodzą jako pierwsze. Nic więcej o potwierdzeniu nie jest z nim przechowywane.
privacy-removal-heading = Usunięcie adresu
privacy-removal = Każdy e-mail zawiera link do usunięcia adresu. Po jego użyciu adres zostaje usunięty. Zostaje tylko jego jednokierunkowy skrót, aby nie trafiła na niego już żadna wiadomość bez nowego potwierdzenia – albo żadna już nigdy, jeśli zapis został zgłoszony jako cudzy.
privacy-shared = Po potwierdzeniu lub usunięciu adresu informację otrzymują własne systemy operatora, wraz z adresem i treścią udzielonej zgody.
privacy-contact = Pytania? Prosimy pisać na adres { $address }.

## mail

mail-greeting = Dzień dobry,
mail-asked = ktoś – mamy nadzieję, że właściciel tego adresu – poprosił o przesyłanie listy { $list } na ten adres.
mail-how = Aby potwierdzić zapis, wystarczy otworzyć ten link i nacisnąć przycisk „{ $button }”:
mail-confirm-link = Potwierdzam zapis
mail-copy = Można też skopiować ten adres do przeglądarki:
mail-until = Link działa do { $date }. Do czasu potwierdzenia nic innego nie zostanie wysłane.
mail-not-you = To pomyłka? Tę wiadomość można zignorować albo na stałe usunąć ten adres:
mail-remove-for-good = Usuń ten adres
mail-welcome = adres został zapisany na listę { $list }. Dziękujemy za potwierdzenie.
mail-preferences-any-time = Na stronie ustawień można w każdej chwili wybrać, co ma od nas przychodzić, albo się wypisać:
mail-preferences-link = Otwórz stronę ustawień
mail-automated = Ta wiadomość została wysłana automatycznie.
mail-privacy = Co przechowujemy i jak długo:
mail-confirm-subject = Prosimy potwierdzić zapis
mail-welcome-subject = Zapis potwierdzony

## language

language-name = Polski
